package redissaver_test

import (
	"context"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"slices"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

// TestListChunks: list.lua reads an index in chunks (a page and one more,
// then doubling up to the scan budget). Filters that match every k-th
// checkpoint make pages end inside a chunk, at its last entry and across
// several chunks; every listing must equal the expected ids, newest first,
// with the pages a full page plus the cursor implies.
func TestListChunks(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			ctx := context.Background()
			const n = 300
			var ids []string // oldest first
			cfg := checkpoint.Config{ThreadID: "chunks"}
			seed := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
			for i := range n {
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}
				var err error
				md := checkpoint.Metadata{"m2": i % 2, "m7": i % 7, "m50": i % 50, "m1000": i % 1000}
				if cfg, err = seed.Put(ctx, cfg, cp, md, nil); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, cp.ID)
			}
			ctr := redistest.CountRoundTrips(rdb)
			root := ""
			for _, pageSize := range []int{1, 3, 10, 100} {
				s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: keys.Of(seed).Prefix(), PageSize: pageSize})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.LoadScripts(ctx); err != nil { // no NOSCRIPT retry in the counts
					t.Fatal(err)
				}
				for _, tc := range []struct {
					key        string
					every, rem int // the filter matches checkpoint i when i%every == rem
					limit      int
				}{
					{"m2", 2, 0, 0}, {"m2", 2, 0, 11}, {"m2", 2, 1, 0}, {"m7", 7, 0, 0}, {"m7", 7, 3, 5}, {"m7", 7, 1, 0},
					{"m50", 50, 0, 0}, {"m50", 50, 0, 3}, {"m50", 50, 49, 0},
					{"m1000", 1000, 0, 0},   // matches only the oldest: the whole index is scanned
					{"m1000", 1000, 999, 0}, // matches nothing
					{"", 1, 0, 0}, {"", 1, 0, 12},
				} {
					for _, ns := range []bool{false, true} { // the thread's index, then the namespace's
						name := fmt.Sprintf("page=%d/%s=%d/limit=%d/ns=%v", pageSize, tc.key, tc.rem, tc.limit, ns)
						q := checkpoint.ListQuery{ThreadID: "chunks", Limit: tc.limit}
						if ns {
							q.CheckpointNS = &root
						}
						if tc.key != "" {
							q.Filter = checkpoint.Metadata{tc.key: tc.rem}
						}
						var want []string
						for i := n - 1; i >= 0; i-- {
							if i%tc.every == tc.rem && (tc.limit == 0 || len(want) < tc.limit) {
								want = append(want, ids[i])
							}
						}
						var got []string
						ctr.Reset()
						for tup, err := range s.List(ctx, q) {
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							got = append(got, tup.Config.CheckpointID)
						}
						if !slices.Equal(got, want) {
							t.Errorf("%s: listed %d checkpoints %v…, want %d %v…", name, len(got), head(got), len(want), head(want))
						}
						// n entries fit one scan budget, so a page ends only when full
						// or at the end of the index. One more call is needed only
						// after a full last page with older entries beyond it that
						// do not match.
						pages := max((len(want)+pageSize-1)/pageSize, 1)
						toEnd := tc.limit == 0 || len(want) < tc.limit
						if toEnd && len(want) > 0 && len(want)%pageSize == 0 && want[len(want)-1] != ids[0] {
							pages++
						}
						if trips := int(ctr.Load()); trips != pages {
							t.Errorf("%s: %d round trips for %d results in pages of %d, want %d", name, trips, len(want), pageSize, pages)
						}
					}
				}
			}
		})
	}
}

func head(ids []string) []string { return ids[:min(3, len(ids))] }

// TestListPageBytes: a page of whole checkpoints ends once their values
// hold 4 MiB (list.lua's BYTES), whatever the page size, so that a List over
// large values blocks Redis no longer than one over small ones (100
// checkpoints of 1 MiB took 250 ms in one call before). Ten checkpoints of
// 1 MiB each come in pages of 4, 4 and 2, newest first, with their values;
// the thread's index and the namespace's alike; and so do ten checkpoints
// each holding a pending write of 1 MiB.
// writesChain puts 10 checkpoints of format version v on thread th, each
// with one pending write of 1 MiB, and returns their IDs, newest first.
func writesChain(t *testing.T, s *redissaver.Saver, th string, v int) []string {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: th}
	var ids []string
	for range 10 {
		var err error
		if cfg, err = s.Put(ctx, cfg, checkpoint.Checkpoint{V: v, ID: checkpoint.NewID()}, nil, nil); err != nil {
			t.Fatal(err)
		}
		must(t, s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "big", Value: strings.Repeat("w", 1<<20)}}, "task", ""))
		ids = append([]string{cfg.CheckpointID}, ids...)
	}
	return ids
}

func TestListPageBytes(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			ctx := context.Background()
			s := newSaver(t, rdb, redissaver.Options{})
			_, ids := largeChain(t, s, "large", 10)
			slices.Reverse(ids) // newest first
			// The same size in pending writes: a checkpoint hash of 1 MiB.
			wids := writesChain(t, s, "large-writes", 4)
			// Legacy checkpoints (v < 4) carry their parent's writes too: 1 MiB
			// of their own and 1 MiB of the parent's.
			lids := writesChain(t, s, "large-legacy", 3)
			must(t, s.LoadScripts(ctx))
			ctr := redistest.CountRoundTrips(rdb)
			ns := ""
			for _, q := range []checkpoint.ListQuery{{ThreadID: "large"}, {ThreadID: "large", CheckpointNS: &ns}} {
				ctr.Reset()
				var got []string
				for tup, err := range s.List(ctx, q) {
					if err != nil {
						t.Fatal(err)
					}
					i := len(ids) - 1 - len(got)
					if v, _ := tup.Checkpoint.ChannelValues["big"].(string); !strings.HasPrefix(v, fmt.Sprint(i, "x")) || len(v) != 1<<20+len(fmt.Sprint(i)) {
						t.Fatalf("checkpoint %d: a value of %d bytes", i, len(v))
					}
					got = append(got, tup.Config.CheckpointID)
				}
				if !slices.Equal(got, ids) {
					t.Errorf("ns=%v: listed %v, want %v", q.CheckpointNS != nil, got, ids)
				}
				// Each page's values (over list.lua's INLINE bytes) come by a plain HMGET.
				if n := ctr.Load(); n != 6 {
					t.Errorf("ns=%v: %d round trips, want 3 pages (4, 4 and 2 checkpoints) of 2 each", q.CheckpointNS != nil, n)
				}
			}
			ctr.Reset()
			var got []string
			for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "large-writes"}) {
				if err != nil {
					t.Fatal(err)
				}
				if len(tup.PendingWrites) != 1 || len(fmt.Sprint(tup.PendingWrites[0].Value)) != 1<<20 {
					t.Fatalf("checkpoint %s: pending writes %d", tup.Config.CheckpointID, len(tup.PendingWrites))
				}
				got = append(got, tup.Config.CheckpointID)
			}
			if !slices.Equal(got, wids) || ctr.Load() != 3 {
				t.Errorf("large writes: listed %d of %d in %d round trips, want 3 pages", len(got), len(wids), ctr.Load())
			}
			ctr.Reset()
			got = nil
			for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "large-legacy"}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, tup.Config.CheckpointID)
			}
			// 2 MiB each but the oldest: pages of 2, 2, 2, 2 and 2.
			if !slices.Equal(got, lids) || ctr.Load() != 5 {
				t.Errorf("legacy: listed %d of %d in %d round trips, want 5 pages", len(got), len(lids), ctr.Load())
			}
		})
	}
}

// TestListEveryThreadAcrossGenerations: a thread deleted and copied onto
// again while a listing of every thread runs has a new generation holding
// the same IDs, whose shard index members sit beside the old ones. The
// listing must not list a checkpoint twice: it keeps, for each thread, the
// generation it met first (so one shard, a page of one, and two shards,
// whose pages are merged).
func TestListEveryThreadAcrossGenerations(t *testing.T) {
	for _, b := range backends {
		for _, shards := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/shards=%d", b.name, shards), func(t *testing.T) {
				rdb := b.client(t)
				ctx := context.Background()
				s := newSaver(t, rdb, redissaver.Options{Shards: shards, PageSize: 1})
				cfg := checkpoint.Config{ThreadID: "src"}
				for i := range 4 {
					v := fmt.Sprint(i + 1)
					cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": v},
						ChannelVersions: map[string]string{"a": v}}
					var err error
					cfg, err = s.Put(ctx, cfg, cp, nil, map[string]string{"a": v})
					must(t, err)
				}
				must(t, s.CopyThread(ctx, "src", "dst"))
				gen := func() string {
					g, err := rdb.HGet(ctx, keys.Of(s).Head("dst"), "g").Result()
					must(t, err)
					return g
				}
				seen := map[checkpoint.Config]bool{}
				replaced := false
				for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
					must(t, err)
					if seen[tup.Config] {
						t.Fatalf("%+v listed twice", tup.Config)
					}
					seen[tup.Config] = true
					if tup.Config.ThreadID == "dst" && !replaced {
						// The new generation's members come after the old ones
						// (descending) when its name sorts lower.
						for old := gen(); gen() >= old; {
							must(t, s.DeleteThread(ctx, "dst"))
							must(t, s.CopyThread(ctx, "src", "dst"))
						}
						replaced = true
					}
				}
				if len(seen) < 5 || len(seen) > 8 {
					t.Errorf("%d checkpoints listed, want the 4 of src and at least the first of dst", len(seen))
				}
			})
		}
	}
}
