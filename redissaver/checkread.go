package redissaver

import (
	"context"
	"maps"
	"slices"
	"strings"

	mb "github.com/graphstate/redcheck/internal/member"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// threadReader reads one thread for the check in bounded pages
// (check_thread.lua).
type threadReader struct {
	c         *checker
	n         int
	enct, gen string
	gone      bool
	lost      string
}

// page reads one page: its next cursor and items.
func (r *threadReader) page(ctx context.Context, part, encns, cursor string, extra ...any) (string, []any, error) {
	l := r.c.s.layout
	args := append([]any{l.ShardBase(r.n), r.enct, r.gen, part, encns, cursor, checkBatch}, extra...)
	res, err := r.c.s.run(ctx, scriptrun.CheckThread, []string{l.ShardBase(r.n) + "t:" + r.enct, l.Threads(r.n), l.All(r.n)}, args...).Slice()
	if err != nil {
		return "", nil, redisErr("check", err)
	}
	if len(res) < 3 {
		return "", nil, corrupt("check thread reply of %d items", len(res))
	}
	switch r.c.d.str(res[0]) {
	case "":
		r.gone = true
	case "lost":
		r.lost = r.c.d.str(res[1])
	default:
		r.gen = r.c.d.str(res[1])
	}
	return r.c.d.str(res[2]), res[3:], nil
}

// all reads every page of a part; scans end at "0", walks at "".
func (r *threadReader) all(ctx context.Context, part, encns, start string) ([]any, error) {
	end := ""
	if start == "0" {
		end = "0"
	}
	var out []any
	for cursor := start; ; {
		next, items, err := r.page(ctx, part, encns, cursor)
		if err != nil || r.gone || r.lost != "" {
			return nil, err
		}
		out = append(out, items...)
		if cursor = next; cursor == end {
			return out, nil
		}
	}
}

// readThread assembles, from bounded pages, what the check verifies of one
// thread: {registered, thread index members, {encoded namespace, in the
// namespace set, namespace index members, values as field, value, ...,
// checkpoints}...}, the checkpoints being those either index names and, one
// level up, the parents those name. A nil reply is a thread gone or expired
// meanwhile; lost names a missing head or registry entry.
//
// The pages are not one snapshot, so they are read in an order that
// concurrent Puts and PutWrites (which only add, each atomically) cannot
// turn into a false finding: namespaces, then each namespace's index, its
// checkpoints and values, then the thread index, and the namespace set and
// indexes again for what the thread index names beyond them. A concurrent
// Prune, DeleteForRuns or CopyThread onto the thread can still cause a
// finding that the next read does not repeat: checker.threads reads such a
// thread again.
func (c *checker) readThread(ctx context.Context, n int, enct string) (reply []any, lost string, err error) {
	r := &threadReader{c: c, n: n, enct: enct}
	stop := func(err error) bool { return err != nil || r.gone || r.lost != "" }
	type nsEntry struct {
		inSet int64
		nsidx []any
		ids   []string
		cps   []any
		blobs []any
	}
	entries := map[string]*nsEntry{}
	var order []string
	seenID := map[string]bool{}
	entry := func(encns string) *nsEntry {
		e := entries[encns]
		if e == nil {
			e = &nsEntry{}
			entries[encns] = e
			order = append(order, encns)
		}
		return e
	}
	addID := func(encns, id string) bool {
		if k := encns + mb.Sep + id; !seenID[k] {
			seenID[k] = true
			e := entry(encns)
			e.ids = append(e.ids, id)
			return true
		}
		return false
	}
	// fill reads a namespace's index and the checkpoints not read yet, with
	// their parents; values once.
	fill := func(encns string) error {
		e := entry(encns)
		nsidx, err := r.all(ctx, "nsidx", encns, "")
		if stop(err) {
			return err
		}
		e.nsidx = nsidx
		var todo []string
		for _, id := range nsidx {
			if addID(encns, c.d.str(id)) {
				todo = append(todo, c.d.str(id))
			}
		}
		cps, err := r.checkpoints(ctx, encns, todo)
		if stop(err) {
			return err
		}
		var parents []string
		for _, cp := range cps {
			if p := c.d.field(c.d.list(c.d.list(cp)[1]), fieldParent); p != "" && addID(encns, p) {
				parents = append(parents, p)
			}
		}
		more, err := r.checkpoints(ctx, encns, parents)
		if stop(err) {
			return err
		}
		e.cps = append(append(e.cps, cps...), more...)
		e.blobs, err = r.all(ctx, "blobs", encns, "0")
		return err
	}
	set, err := r.all(ctx, "ns", "", "0")
	if stop(err) {
		return nil, r.lost, err
	}
	for _, m := range set {
		entry(c.d.str(m)).inSet = 1
	}
	for _, encns := range slices.Clone(order) {
		if err := fill(encns); stop(err) {
			return nil, r.lost, err
		}
	}
	tidx, err := r.all(ctx, "tidx", "", "")
	if stop(err) {
		return nil, r.lost, err
	}
	// What the thread index names beyond what was read: checkpoints put
	// meanwhile, or entries whose checkpoint or namespace index is missing.
	extra := map[string][]string{}
	for _, m := range tidx {
		if id, encns, ok := strings.Cut(c.d.str(m), mb.Sep); ok && !strings.Contains(encns, mb.Sep) && !seenID[encns+mb.Sep+id] {
			extra[encns] = append(extra[encns], id)
		}
	}
	if len(extra) > 0 {
		again, err := r.all(ctx, "ns", "", "0")
		if stop(err) {
			return nil, r.lost, err
		}
		for _, m := range again {
			entry(c.d.str(m)).inSet = 1
		}
		// Only what the thread index names is read now: the namespace
		// index (for membership), those checkpoints, then the values again
		// (a superset of what they point to). Checkpoints put after the
		// thread index was read are left to the next check.
		for _, encns := range slices.Sorted(maps.Keys(extra)) {
			e := entry(encns)
			if e.nsidx, err = r.all(ctx, "nsidx", encns, ""); stop(err) {
				return nil, r.lost, err
			}
			var todo []string
			for _, id := range extra[encns] {
				if addID(encns, id) {
					todo = append(todo, id)
				}
			}
			cps, err := r.checkpoints(ctx, encns, todo)
			if stop(err) {
				return nil, r.lost, err
			}
			e.cps = append(e.cps, cps...)
			if e.blobs, err = r.all(ctx, "blobs", encns, "0"); stop(err) {
				return nil, r.lost, err
			}
		}
	}
	reply = []any{int64(1), tidx}
	for _, encns := range order {
		e := entries[encns]
		reply = append(reply, []any{encns, e.inSet, e.nsidx, e.blobs, e.cps})
	}
	return reply, "", nil
}

// checkpoints reads the checkpoints ids of a namespace, checkBatch per page.
func (r *threadReader) checkpoints(ctx context.Context, encns string, ids []string) ([]any, error) {
	var out []any
	for len(ids) > 0 {
		batch := ids[:min(checkBatch, len(ids))]
		ids = ids[len(batch):]
		extra := make([]any, len(batch))
		for i, id := range batch {
			extra[i] = id
		}
		_, items, err := r.page(ctx, "cps", encns, "", extra...)
		if err != nil || r.gone || r.lost != "" {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}
