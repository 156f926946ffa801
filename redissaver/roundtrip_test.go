package redissaver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// TestRoundTrips pins the round trips of every operation: one for each write
// and read, one per List page, whatever the history length.
func TestRoundTrips(t *testing.T) {
	for _, tier := range []struct {
		name   string
		client func(t *testing.T) *redis.Client
	}{
		{"miniredis", func(t *testing.T) *redis.Client { _, c := redistest.Mini(t); return c }},
		{"redis", func(t *testing.T) *redis.Client { return redistest.Real(t) }},
	} {
		t.Run(tier.name, func(t *testing.T) {
			rdb := tier.client(t)
			ctr := redistest.CountRoundTrips(rdb)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			if err := s.LoadScripts(ctx); err != nil {
				t.Fatal(err)
			}
			expect := func(what string, want int64, f func() error) {
				t.Helper()
				ctr.Reset()
				if err := f(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if got := ctr.Load(); got != want {
					t.Errorf("%s: %d round trips (%v), want %d", what, got, ctr.Commands(), want)
				}
			}
			cfg := checkpoint.Config{ThreadID: "rt-thread"}
			var ids []string
			parent := cfg
			for i := range 250 {
				id := checkpoint.NewID()
				ids = append(ids, id)
				cp := checkpoint.Checkpoint{V: 4, ID: id, TS: "t", ChannelValues: map[string]any{"messages": []any{i}, "n": i},
					ChannelVersions: map[string]string{"messages": fmt.Sprint(i + 1), "n": fmt.Sprint(i + 1)}}
				expect("Put", 1, func() error {
					var err error
					parent, err = s.Put(ctx, parent, cp, checkpoint.Metadata{"step": i, "source": "loop"}, cp.ChannelVersions)
					return err
				})
				expect("PutWrites", 1, func() error {
					return s.PutWrites(ctx, parent, []checkpoint.Write{{Channel: "a", Value: 1}, {Channel: "b", Value: 2}, {Channel: checkpoint.InterruptChannel, Value: "x"}}, "task", "")
				})
			}
			expect("GetTuple latest", 1, func() error { _, err := s.GetTuple(ctx, cfg); return err })
			expect("GetTuple by id", 1, func() error { _, err := s.GetTuple(ctx, cfg.WithID(ids[3])); return err })
			expect("GetTuple missing", 1, func() error {
				_, err := s.GetTuple(ctx, cfg.WithID("nope"))
				if err == nil {
					return fmt.Errorf("found a missing checkpoint")
				}
				return nil
			})
			list := func(q checkpoint.ListQuery, want int) func() error {
				return func() error {
					n := 0
					for _, err := range s.List(ctx, q) {
						if err != nil {
							return err
						}
						n++
					}
					if n != want {
						return fmt.Errorf("listed %d, want %d", n, want)
					}
					return nil
				}
			}
			root := ""
			expect("List page of 10", 1, list(checkpoint.ListQuery{ThreadID: "rt-thread", CheckpointNS: &root, Limit: 10}, 10))
			expect("List page of 10, every namespace", 1, list(checkpoint.ListQuery{ThreadID: "rt-thread", Limit: 10}, 10))
			expect("List filtered page", 1, list(checkpoint.ListQuery{ThreadID: "rt-thread", Filter: checkpoint.Metadata{"step": 7}, Limit: 10}, 1))
			expect("List before", 1, list(checkpoint.ListQuery{ThreadID: "rt-thread", Before: ids[100], Limit: 5}, 5))
			// 250 checkpoints at the default page size of 100: three pages.
			expect("List whole history", 3, list(checkpoint.ListQuery{ThreadID: "rt-thread"}, 250))
			// Every thread of 16 shards: find, then read (two pipelines).
			expect("List every thread, 16 shards", 2, list(checkpoint.ListQuery{Limit: 10}, 10))
			expect("DeltaChannelHistory", 1, func() error {
				_, err := s.DeltaChannelHistory(ctx, parent, []string{"a", "b"})
				return err
			})
			// 250 checkpoints: the first script retires the thread and
			// reclaims 64 units, three sweep steps of 64 the rest.
			expect("DeleteThread", 4, func() error { return s.DeleteThread(ctx, "rt-thread") })

			one := newSaver(t, rdb, redissaver.Options{Shards: 1})
			if err := one.LoadScripts(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := one.Put(ctx, cfg, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil); err != nil {
				t.Fatal(err)
			}
			ctr.Reset()
			n := 0
			for _, err := range one.List(ctx, checkpoint.ListQuery{Limit: 10}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if got := ctr.Load(); got != 1 || n != 1 {
				t.Errorf("List every thread, one shard: %d round trips, %d results; want 1 and 1", got, n)
			}
		})
	}
}
