package redisstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/redis/go-redis/v9"
)

// The documented cost of every operation, in round trips to Redis, once
// the scripts are loaded.
func checkRoundTrips(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	emb, err := embed.NewHashing(64)
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t, rdb, redisstore.Options{Embedder: emb, Dims: 64, RefreshOnRead: redisstore.RefreshOn})
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	ctr := redistest.CountRoundTrips(rdb)
	for i := range 30 {
		if err := s.Put(ctx, []string{"u", fmt.Sprint(i % 3)}, fmt.Sprint("k", i), map[string]any{"text": fmt.Sprint("note ", i), "i": i}, redisstore.WithTTL(3600e9)); err != nil {
			t.Fatal(err)
		}
	}
	ops := func(n int, mk func(i int) redisstore.Op) []redisstore.Op {
		var out []redisstore.Op
		for i := range n {
			out = append(out, mk(i))
		}
		return out
	}
	reads := func(i int) redisstore.Op {
		switch i % 4 {
		case 0:
			return redisstore.GetOp{Namespace: []string{"u", "0"}, Key: fmt.Sprint("k", i), RefreshTTL: redisstore.Refresh(1 + i%8/4)}
		case 1:
			return redisstore.SearchOp{NamespacePrefix: []string{"u"}, Options: redisstore.SearchOptions{Query: fmt.Sprint("note ", i)}}
		case 2:
			return redisstore.SearchOp{NamespacePrefix: []string{"u"}, Options: redisstore.SearchOptions{Filter: map[string]any{"i": map[string]any{"$gt": i}}}}
		}
		return redisstore.ListNamespacesOp{Options: redisstore.ListNamespacesOptions{Prefix: []string{"u"}}}
	}
	writes := func(i int) redisstore.Op {
		if i%3 == 0 {
			return redisstore.DeleteOp{Namespace: []string{"u", "1"}, Key: fmt.Sprint("k", i)}
		}
		return redisstore.PutOp{Namespace: []string{"w"}, Key: fmt.Sprint("b", i), Value: map[string]any{"text": "batch"}}
	}
	tests := []struct {
		name string
		want int64
		op   func() error
	}{
		{"Put", 1, func() error {
			return s.Put(ctx, []string{"u", "0"}, "new", map[string]any{"text": "hello"})
		}},
		{"Put without index", 1, func() error {
			return s.Put(ctx, []string{"u", "0"}, "new", map[string]any{"text": "hello"}, redisstore.NoIndex())
		}},
		{"Get", 1, func() error { _, err := s.Get(ctx, []string{"u", "0"}, "k0"); return err }},
		{"Get missing", 1, func() error {
			_, err := s.Get(ctx, []string{"u", "0"}, "nope")
			if err == nil {
				return fmt.Errorf("found")
			}
			return nil
		}},
		{"Delete", 1, func() error { return s.Delete(ctx, []string{"u", "0"}, "new") }},
		{"Search", 2, func() error { _, err := s.Search(ctx, []string{"u"}, redisstore.SearchOptions{}); return err }},
		{"Search with a filter", 2, func() error {
			_, err := s.Search(ctx, nil, redisstore.SearchOptions{Filter: map[string]any{"i": map[string]any{"$gte": 10}}, Offset: 3})
			return err
		}},
		{"Search with a query", 2, func() error {
			_, err := s.Search(ctx, []string{"u"}, redisstore.SearchOptions{Query: "note 7", Limit: 5})
			return err
		}},
		{"Search with a query and a filter", 2, func() error {
			_, err := s.Search(ctx, []string{"u"}, redisstore.SearchOptions{Query: "note", Filter: map[string]any{"i": 3}})
			return err
		}},
		{"ListNamespaces", 1, func() error {
			_, err := s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Prefix: []string{"*"}, MaxDepth: 1})
			return err
		}},
		{"Sweep", 1, func() error { _, err := s.Sweep(ctx); return err }},
		// Reads: one script for the gets of each refresh setting, two round
		// trips per search (a walk of one step, then the page's items; 3 of
		// the 20 pages are empty) and one per listing.
		{"Batch of 40 reads", 2 + 20*2 - 3 + 10, func() error { _, err := s.Batch(ctx, ops(40, reads)); return err }},
		// Writes: one script per 32 (writeChunk).
		{"Batch of 40 writes", 2, func() error { _, err := s.Batch(ctx, ops(40, writes)); return err }},
		{"Batch of 40 reads and 40 writes", 2 + 20*2 - 3 + 10 + 2, func() error {
			_, err := s.Batch(ctx, append(ops(40, writes), ops(40, reads)...))
			return err
		}},
		{"empty Batch", 0, func() error { _, err := s.Batch(ctx, nil); return err }},
	}
	for _, tt := range tests {
		ctr.Reset()
		if err := tt.op(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n := ctr.Load(); n != tt.want {
			t.Errorf("%s: %d round trips, want %d (commands %v)", tt.name, n, tt.want, ctr.Commands())
		}
	}

	// Without LoadScripts, the first call of an operation costs one more
	// round trip (NOSCRIPT, then EVAL).
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	ctr.Reset()
	if _, err := s.Get(ctx, []string{"u", "0"}, "k0"); err != nil {
		t.Fatal(err)
	}
	if n := ctr.Load(); n != 2 {
		t.Errorf("Get after SCRIPT FLUSH: %d round trips, want 2 (%v)", n, ctr.Commands())
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := s.Batch(ctx, ops(8, reads))
	if err != nil {
		t.Fatalf("Batch after SCRIPT FLUSH: %v", err)
	}
	if res[0].Item == nil || res[1].Items == nil {
		t.Fatalf("Batch after SCRIPT FLUSH: %+v", res[:2])
	}
}

func TestRoundTripsMiniredis(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkRoundTrips(t, rdb)
}

func TestRoundTripsRealRedis(t *testing.T) {
	// A client of its own: the counter hook stays on it.
	rdb := redis.NewClient(redistest.Real(t).Options())
	t.Cleanup(func() { _ = rdb.Close() })
	checkRoundTrips(t, rdb)
}
