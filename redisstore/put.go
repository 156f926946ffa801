package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// PutOption changes how Put stores one item.
type PutOption func(*putConfig)

type putConfig struct {
	ttl       time.Duration
	fields    []string
	fieldsSet bool
}

// WithTTL sets the item's time to live, overriding Options.TTL: the item
// expires d after this Put (or after its last refreshing read). WithTTL(0)
// keeps the item forever. d must be 0 or at least a millisecond.
func WithTTL(d time.Duration) PutOption {
	return func(c *putConfig) { c.ttl = d }
}

// WithIndex embeds the texts at these field paths (see Options.Fields)
// instead of Options.Fields. WithIndex() with no fields stores no vectors:
// the item is then left out of searches with a query. It has no effect on a
// store without an Embedder.
func WithIndex(fields ...string) PutOption {
	return func(c *putConfig) { c.fields, c.fieldsSet = append([]string{}, fields...), true }
}

// NoIndex stores the item without vectors, as WithIndex() does.
func NoIndex() PutOption { return WithIndex() }

// write is one put or delete, ready for the write script.
type write struct {
	del   bool
	ns    []string
	key   string
	ttl   time.Duration
	value []byte // canonical JSON
	// stored is the value as stored: value, or its encrypted form (set by
	// writeAll)
	stored []byte
	paths  []path // what to embed; nil for nothing
	vecs   packedVectors
}

// Put stores value at (namespace, key), replacing any item there. An update
// keeps the item's CreatedAt and moves its UpdatedAt. With an Embedder, Put
// embeds the value's texts (Options.Fields, or WithIndex) first: one call to
// the Embedder, then one round trip to Redis, one atomic script that also
// updates the indexes and sweeps a few index entries of expired items.
//
// value is stored as canonical JSON (object keys sorted, numbers
// normalised, see checkpoint.EncodeMetadataValue). A nil map deletes the
// item, as a None value does in LangGraph (its options are then ignored);
// an empty, non-nil map stores an empty object.
//
// Errors: ErrInvalidNamespace, ErrInvalidKey, ErrInvalidValue,
// ErrInvalidArgument (a bad TTL or field path), ErrEmbedding, or the Redis
// error, wrapped. Nothing is written when an error is returned before the
// round trip.
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any, opts ...PutOption) (err error) {
	ctx, call := s.begin(ctx, opPut)
	defer func() { call.end(err) }()
	call.item(namespace, key)
	w, err := s.preparePut(namespace, key, value, opts)
	if err != nil {
		return err
	}
	return s.applyWrites(ctx, []*write{w})
}

// Delete removes the item at (namespace, key), if any, and its index
// entries: one round trip. Deleting an absent item is not an error.
//
// Errors: ErrInvalidNamespace, ErrInvalidKey, or the Redis error, wrapped.
func (s *Store) Delete(ctx context.Context, namespace []string, key string) (err error) {
	ctx, call := s.begin(ctx, opDelete)
	defer func() { call.end(err) }()
	call.item(namespace, key)
	w, err := prepareDelete(namespace, key)
	if err != nil {
		return err
	}
	return s.applyWrites(ctx, []*write{w})
}

// Sweep removes the index entries of every expired item, and the
// namespaces left empty, in rounds of 1000 entries (one round trip each),
// and returns how many entries it removed. Every write already sweeps a few
// entries, and reads never return expired items, so calling Sweep is only
// needed to reclaim memory sooner, say from a periodic job.
func (s *Store) Sweep(ctx context.Context) (total int, err error) {
	ctx, call := s.begin(ctx, opSweep)
	defer func() {
		call.set(attrSwept.Int(total))
		call.end(err)
	}()
	for {
		res, err := s.run(ctx, scriptrun.StoreWrite, []any{s.base, sweepBatch, 0}).Slice()
		if err != nil {
			return total, redisErr("sweep", err)
		}
		n, err := sweptCount(res)
		if err != nil {
			return total, err
		}
		total += n
		if n < sweepBatch {
			return total, nil
		}
	}
}

func (s *Store) preparePut(ns []string, key string, value map[string]any, opts []PutOption) (*write, error) {
	if value == nil {
		return prepareDelete(ns, key)
	}
	if err := validateNamespace(ns); err != nil {
		return nil, err
	}
	if err := validateKey(key); err != nil {
		return nil, err
	}
	cfg := putConfig{ttl: s.opts.TTL}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := validTTL(cfg.ttl); err != nil {
		return nil, err
	}
	enc, err := checkpoint.EncodeMetadataValue(value)
	if err != nil {
		return nil, errorf(ErrInvalidValue, "%v", err)
	}
	if d := jsonDepth(enc); d > MaxValueDepth {
		return nil, errorf(ErrInvalidValue, "nested %d levels deep (max %d)", d, MaxValueDepth)
	}
	w := &write{ns: ns, key: key, ttl: cfg.ttl, value: enc}
	if s.opts.Embedder != nil {
		w.paths = s.fields
		if cfg.fieldsSet {
			if w.paths, err = parsePaths(cfg.fields); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

func prepareDelete(ns []string, key string) (*write, error) {
	if err := validateNamespace(ns); err != nil {
		return nil, err
	}
	if err := validateKey(key); err != nil {
		return nil, err
	}
	return &write{del: true, ns: ns, key: key}, nil
}

// Bounds of one write script: at most writeChunk operations and about
// writeBytes bytes of values and vectors (one operation may exceed it).
const (
	writeChunk = 32
	writeBytes = 256 << 10
)

// applyWrites embeds and then applies ws, in order: one script call for up
// to writeChunk operations and writeBytes bytes, so one atomic round trip
// for a few writes and several, in order, for more. When a call fails, the
// calls before it stay applied and the error says how many operations
// they held; no call is sent twice.
func (s *Store) applyWrites(ctx context.Context, ws []*write) error {
	if err := s.embedAll(ctx, ws, nil); err != nil {
		return err
	}
	return s.writeAll(ctx, ws)
}

// writeAll applies ws, embedded already, as applyWrites says.
func (s *Store) writeAll(ctx context.Context, ws []*write) error {
	for _, w := range ws {
		if w.del {
			continue
		}
		var err error
		if w.stored, err = s.sealItem(ctx, w.ns, w.key, w.value); err != nil {
			return err
		}
	}
	done := 0
	for done < len(ws) {
		end, size := done, 0
		for end < len(ws) && end-done < writeChunk && (end == done || size+ws[end].size() <= writeBytes) {
			size += ws[end].size()
			end++
		}
		res, err := s.run(ctx, scriptrun.StoreWrite, s.writeArgs(ws[done:end], sweepPerWrite)).Slice()
		if err == nil {
			_, err = sweptCount(res)
		}
		if err == nil {
			for _, w := range ws[done:end] {
				wrote(ctx, len(w.value)+len(w.vecs.float))
			}
		}
		if err != nil {
			if done > 0 {
				return fmt.Errorf("redisstore: write: %d of %d operations applied, then: %w", done, len(ws), err)
			}
			return redisErr("write", err)
		}
		done = end
	}
	return nil
}

// size is the number of bytes a write sends.
func (w *write) size() int { return len(w.stored) + len(w.vecs.float) + 64 }

// writeArgs are the arguments of the write script; see store_write.lua.
func (s *Store) writeArgs(ws []*write, sweep int) []any {
	args := make([]any, 0, 3+7*len(ws))
	args = append(args, s.base, sweep, len(ws))
	for _, w := range ws {
		k := keys.Encode(w.key)
		if w.del {
			args = append(args, "d", member(w.ns), k, 0, "", 0, "")
			continue
		}
		args = append(args, "p", member(w.ns), k, w.ttl.Milliseconds(), w.stored,
			w.vecs.n, w.vecs.float)
	}
	return args
}

// sweptCount reads the reply of the write script: {created, swept}.
func sweptCount(res []any) (int, error) {
	if len(res) != 2 {
		return 0, errorf(ErrCorrupt, "write script replied %v", res)
	}
	n, ok := res[1].(int64)
	if !ok {
		return 0, errorf(ErrCorrupt, "write script replied %v", res)
	}
	return int(n), nil
}

// jsonDepth returns the deepest nesting of objects and arrays in JSON.
func jsonDepth(j []byte) int {
	depth, peak, inString := 0, 0, false
	for i := 0; i < len(j); i++ {
		c := j[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			peak = max(peak, depth)
		case ']', '}':
			depth--
		}
	}
	return peak
}
