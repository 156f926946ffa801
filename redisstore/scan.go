package redisstore

import (
	"context"
	"strconv"

	"github.com/graphstate/redcheck/internal/scriptrun"
)

// Work bounds of the steps of a walk over the items (store_scan.lua): each
// script call reads at most scanSteps index entries (each one HMGET) and
// returns at most about scanBytes bytes of values and vectors, which keeps
// it within a few milliseconds of Redis time (see the package doc).
const (
	scanSteps = 200
	scanBytes = 64 << 10
)

type scanEntry struct {
	id      string // encoded namespace ":" encoded key
	updated int64  // µs
	nvec    int    // number of vectors ("w" mode)
	vectors string // float32 little-endian ("w" mode)
	value   string // canonical JSON ("v" mode)
}

// scanCursor is where a walk resumes; see store_scan.lua.
type scanCursor struct {
	member, score, last string
	taken               int64
}

// scan walks the items of the namespaces in the registry range [lo, hi],
// namespace by namespace and newest first in each, in bounded steps (one
// round trip each), and calls fn for each live item; an error of fn ends
// the walk with it. perNS, when positive,
// stops the walk of each namespace after that many items. mode says which
// fields to return: "u", "uv", "uw" or "uvw".
func (s *Store) scan(ctx context.Context, lo, hi string, perNS int, mode string, fn func(scanEntry) error) error {
	var cur scanCursor
	for {
		done, err := s.scanStep(ctx, lo, hi, perNS, mode, scanSteps, &cur, fn)
		if err != nil || done {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// scanStep runs one step of a walk of at most steps entries, from cur,
// which it moves on, and reports whether the walk is over.
func (s *Store) scanStep(ctx context.Context, lo, hi string, perNS int, mode string, steps int, cur *scanCursor, fn func(scanEntry) error) (bool, error) {
	res, err := s.run(ctx, scriptrun.StoreScan, []any{s.base, lo, hi, cur.member, cur.score, cur.last,
		cur.taken, perNS, mode, scanBytes, steps}).Slice()
	if err != nil {
		return false, redisErr("search", err)
	}
	if len(res) < 5 {
		return false, errorf(ErrCorrupt, "scan script replied %d fields", len(res))
	}
	done, ok1 := res[0].(int64)
	m, ok2 := res[1].(string)
	sc, ok3 := res[2].(string)
	last, ok4 := res[3].(string)
	taken, ok5 := res[4].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return false, errorf(ErrCorrupt, "scan script replied cursor %v", res[:5])
	}
	*cur = scanCursor{m, sc, last, taken}
	for _, r := range res[5:] {
		if e, ok := decodeScanEntry(r); ok {
			readBytes(ctx, len(e.value)+len(e.vectors))
			if err := fn(e); err != nil {
				return false, err
			}
		}
	}
	return done == 1, nil
}

// decodeScanEntry reads one entry of the scan script; false for one the
// store did not write (a hand-edited item), which the walk skips.
func decodeScanEntry(r any) (scanEntry, bool) {
	raw, ok := r.([]any)
	if !ok || len(raw) != 5 {
		return scanEntry{}, false
	}
	id, ok1 := raw[0].(string)
	us, ok2 := raw[1].(string)
	u, err := strconv.ParseInt(us, 10, 64)
	if !ok1 || !ok2 || err != nil {
		return scanEntry{}, false
	}
	e := scanEntry{id: id, updated: u}
	if n, ok := raw[2].(string); ok {
		e.nvec, _ = strconv.Atoi(n) // a bad count is caught by the vectors' length
	}
	e.vectors, _ = raw[3].(string)
	e.value, _ = raw[4].(string)
	return e, true
}
