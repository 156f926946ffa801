package redissaver_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

const (
	goroutines = 256 // concurrent writers
	chainLen   = 8   // checkpoints each writes
)

// inFlight counts the saver calls running at once and remembers the most.
type inFlight struct{ now, peak atomic.Int64 }

func (f *inFlight) do(call func() error) error {
	n := f.now.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	defer f.now.Add(-1)
	return call()
}

// concurrencyClients are the backends of the concurrency tests: a real
// Redis, with a pool large enough that the 256 writers do reach it at once.
// (miniredis runs scripts in gopher-lua, ten times slower under -race: the
// same tests there take 15 s and prove nothing more.)
func concurrencyClients(t *testing.T) map[string]redis.UniversalClient {
	opt := *redistest.Real(t).Options() // REDIS_URL's options, when set
	opt.PoolSize = goroutines
	rdb := redis.NewClient(&opt)
	t.Cleanup(func() { _ = rdb.Close() })
	return map[string]redis.UniversalClient{"redis": rdb}
}

// TestConcurrentWritersOneThread: 256 goroutines write to one thread at
// once. The 128 chains of 8 checkpoints are each written by two goroutines
// (the same checkpoints, put twice concurrently, each adding its own
// task's write). Afterwards the thread holds exactly the 1024 checkpoints,
// once each, with both writes, listed in strictly descending ID order.
func TestConcurrentWritersOneThread(t *testing.T) {
	for name, rdb := range concurrencyClients(t) {
		t.Run(name, func(t *testing.T) {
			s := newSaver(t, rdb, redissaver.Options{Shards: 8})
			ctx := context.Background()
			const chains = goroutines / 2
			ids := make([][]string, chains)
			for c := range ids {
				for range chainLen {
					ids[c] = append(ids[c], checkpoint.NewID())
				}
			}
			var flight inFlight
			var wg sync.WaitGroup
			start := time.Now()
			for g := range goroutines {
				chain, task := g%chains, fmt.Sprint("task-", g/chains)
				wg.Add(1)
				go func() {
					defer wg.Done()
					cfg := checkpoint.Config{ThreadID: "shared"}
					for i, id := range ids[chain] {
						cp := checkpoint.Checkpoint{V: 4, ID: id, ChannelValues: map[string]any{"chain": chain, "i": i},
							ChannelVersions: map[string]string{"chain": "1", "i": fmt.Sprint(i + 1)}}
						nv := map[string]string{"i": fmt.Sprint(i + 1), "chain": "1"}
						err := flight.do(func() (err error) {
							cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"chain": chain, "run_id": fmt.Sprint("run-", chain%4)}, nv)
							return err
						})
						if err != nil {
							t.Errorf("Put: %v", err)
							return
						}
						if err := flight.do(func() error {
							return s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: task}}, task, "")
						}); err != nil {
							t.Errorf("PutWrites: %v", err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)

			var listed []string
			for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "shared"}) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, tup.Config.CheckpointID)
				if len(tup.PendingWrites) != 2 || tup.PendingWrites[0].TaskID == tup.PendingWrites[1].TaskID {
					t.Errorf("checkpoint %s: writes %v, want one from each of its two writers", tup.Config.CheckpointID, tup.PendingWrites)
				}
			}
			wantIDs := slices.Concat(ids...)
			slices.Sort(wantIDs)
			slices.Reverse(wantIDs)
			if !slices.Equal(listed, wantIDs) {
				t.Errorf("List: %d checkpoints; want exactly the %d written, once each, in descending ID order", len(listed), len(wantIDs))
			}
			latest, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "shared"})
			if err != nil || latest.Config.CheckpointID != wantIDs[0] {
				t.Errorf("latest = %v, %v; want %s", latest, err, wantIDs[0])
			}
			res := requireSound(t, s, "")
			if res.Checkpoints != chains*chainLen || res.Writes != 2*chains*chainLen {
				t.Errorf("check: %d checkpoints, %d writes; want %d and %d", res.Checkpoints, res.Writes, chains*chainLen, 2*chains*chainLen)
			}
			t.Logf("%d goroutines, peak %d saver calls in flight: %d puts and %d writes to one thread in %v; %d checkpoints listed in order, 0 violations",
				goroutines, flight.peak.Load(), goroutines*chainLen, goroutines*chainLen, elapsed.Round(time.Millisecond), len(listed))
		})
	}
}

// TestConcurrentWritersManyThreads: 256 goroutines each write a chain of 8
// checkpoints to a thread of their own, at once. Every thread reads back
// whole with its parent chain intact, and List over every thread yields
// the 2048 checkpoints once each in strictly descending ID order.
func TestConcurrentWritersManyThreads(t *testing.T) {
	for name, rdb := range concurrencyClients(t) {
		t.Run(name, func(t *testing.T) {
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			var flight inFlight
			var wg sync.WaitGroup
			written := make([][]string, goroutines)
			start := time.Now()
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cfg := checkpoint.Config{ThreadID: fmt.Sprint("thread-", g)}
					for i := range chainLen {
						cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"i": i},
							ChannelVersions: map[string]string{"i": fmt.Sprint(i + 1)}}
						err := flight.do(func() (err error) {
							cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"g": g}, cp.ChannelVersions)
							return err
						})
						if err == nil {
							err = flight.do(func() error {
								return s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: i}, {Channel: "x", Value: g}}, "task", "")
							})
						}
						if err != nil {
							t.Errorf("goroutine %d: %v", g, err)
							return
						}
						written[g] = append(written[g], cp.ID)
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)

			var all []string
			for g, ids := range written {
				var chain, parents []string
				for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: fmt.Sprint("thread-", g)}) {
					if err != nil {
						t.Fatal(err)
					}
					if len(tup.PendingWrites) != 2 {
						t.Errorf("thread %d checkpoint %s: writes %v", g, tup.Config.CheckpointID, tup.PendingWrites)
					}
					chain = append(chain, tup.Config.CheckpointID)
					parent := ""
					if tup.ParentConfig != nil {
						parent = tup.ParentConfig.CheckpointID
					}
					parents = append(parents, parent)
				}
				// Newest first, each the child of the next one.
				want := slices.Clone(ids)
				slices.Reverse(want)
				wantParents := append(slices.Clone(want[1:]), "")
				if !slices.Equal(chain, want) || !slices.Equal(parents, wantParents) {
					t.Errorf("thread %d lists %v with parents %v; want %v with parents %v", g, chain, parents, want, wantParents)
				}
				all = append(all, ids...)
			}
			slices.Sort(all)
			slices.Reverse(all)
			var listed []string
			for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, tup.Config.CheckpointID)
			}
			if !slices.Equal(listed, all) {
				t.Errorf("List over every thread: %d checkpoints; want the %d written, once each, in descending ID order", len(listed), len(all))
			}
			res := requireSound(t, s, "")
			if res.Threads != goroutines || res.Checkpoints != len(all) {
				t.Errorf("check: %d threads, %d checkpoints; want %d and %d", res.Threads, res.Checkpoints, goroutines, len(all))
			}
			t.Logf("%d goroutines on %d threads, peak %d saver calls in flight: %d puts and %d writes in %v; all listed in order, 0 violations",
				goroutines, goroutines, flight.peak.Load(), len(all), 2*len(all), elapsed.Round(time.Millisecond))
		})
	}
}
