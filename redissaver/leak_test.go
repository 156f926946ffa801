package redissaver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// TestNoKeyWithoutOwner: Puts, re-puts, PutWrites, DeleteThread, Prune,
// CopyThread and DeleteForRuns race on a few threads for a few seconds;
// then every thread is deleted and Sweep runs to the end. What is left is
// only the prefix's meta key, its shard registries and feeds, and event
// streams with a TTL: no keep set, stage, copy staging or data key without
// an owner.
func TestNoKeyWithoutOwner(t *testing.T) {
	rdb := redistest.Real(t)
	s := newSaver(t, rdb, redissaver.Options{Shards: 2, Events: redissaver.Events{RetainDeleted: time.Minute}})
	ctx := context.Background()
	threads := []string{"a", "b", "c", "d"}
	targets := []string{"copy-1", "copy-2"}
	ops := map[string]func(r *rand.Rand) error{
		"put": func(r *rand.Rand) error {
			th := threads[r.IntN(len(threads))]
			cfg := checkpoint.Config{ThreadID: th, CheckpointNS: []string{"", "sub"}[r.IntN(2)]}
			if tup, err := s.GetTuple(ctx, cfg); err == nil {
				cfg = tup.Config
			}
			v := fmt.Sprint(r.IntN(1000) + 1)
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"x": strings.Repeat("v", 200), "d": checkpoint.DeltaSnapshot{Value: []any{1}}},
				ChannelVersions: map[string]string{"x": v, "d": "1"}}
			_, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"run_id": fmt.Sprint("run-", r.IntN(3)), "step": 1}, map[string]string{"x": v, "d": "1"})
			return err
		},
		"writes": func(r *rand.Rand) error {
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: threads[r.IntN(len(threads))]})
			if err != nil {
				return err
			}
			return s.PutWrites(ctx, tup.Config, []checkpoint.Write{{Channel: "d", Value: r.IntN(9)}}, fmt.Sprint("task-", r.IntN(3)), "")
		},
		"delete": func(r *rand.Rand) error { return s.DeleteThread(ctx, threads[r.IntN(len(threads))]) },
		"prune": func(r *rand.Rand) error {
			return s.Prune(ctx, []string{threads[r.IntN(len(threads))]}, checkpoint.PruneKeepLatest)
		},
		"copy": func(r *rand.Rand) error {
			target := targets[r.IntN(len(targets))]
			if err := s.DeleteThread(ctx, target); err != nil {
				return err
			}
			return s.CopyThread(ctx, threads[r.IntN(len(threads))], target)
		},
		"runs": func(r *rand.Rand) error { return s.DeleteForRuns(ctx, []string{fmt.Sprint("run-", r.IntN(3))}) },
	}
	names := []string{"put", "put", "put", "writes", "writes", "delete", "prune", "copy", "runs"}
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Second)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for n := 0; n < 5000 && time.Now().Before(deadline); n++ {
				name := names[r.IntN(len(names))]
				err := ops[name](r)
				mu.Lock()
				counts[name]++
				if err != nil {
					counts[name+" "+errKind(err)]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("operations: %v", counts)
	for _, th := range append(threads, targets...) {
		must(t, s.DeleteThread(ctx, th))
	}
	// Pending writes that a PutWrites stored for a checkpoint deleted under
	// it wait in their shard's early registry for their time (10 minutes):
	// let it come.
	l := keys.Of(s)
	for n := range l.Shards() {
		reg := l.EarlyIndex(n)
		for _, m := range rdb.ZRange(ctx, reg, 0, -1).Val() {
			must(t, rdb.ZAdd(ctx, reg, redis.Z{Score: 1, Member: m}).Err())
		}
	}
	for range 1000 {
		n, err := s.Sweep(ctx)
		must(t, err)
		if n == 0 {
			break
		}
	}
	owned := map[string]bool{l.Meta(): true}
	for n := range l.Shards() {
		owned[l.Threads(n)], owned[l.Feed(n)] = true, true
	}
	ks, err := rdb.Keys(ctx, l.Prefix()+":*").Result()
	must(t, err)
	left := 0
	for _, k := range ks {
		if owned[k] {
			continue
		}
		if ttl := rdb.PTTL(ctx, k).Val(); ttl > 0 && strings.HasSuffix(k, ":events") {
			continue
		}
		left++
		if left <= 20 {
			t.Errorf("key without an owner: %s (%s, TTL %v)", k, rdb.Type(ctx, k).Val(), rdb.PTTL(ctx, k).Val())
		}
	}
	if left > 0 {
		t.Errorf("%d keys without an owner", left)
	}
}

// TestEmptiedThreadStreamExpires: a thread that DeleteForRuns empties is
// gone, and its event stream, which nothing else owns, expires after
// Events.RetainDeleted, as a deleted thread's does; a stream left without a
// TTL (by hand, or an earlier version) gets it from a DeleteThread of the
// unknown thread.
func TestEmptiedThreadStreamExpires(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{Events: redissaver.Events{RetainDeleted: time.Minute}})
			ctx := context.Background()
			_, err := s.Put(ctx, checkpoint.Config{ThreadID: "runs"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, checkpoint.Metadata{"run_id": "r"}, nil)
			must(t, err)
			must(t, s.DeleteForRuns(ctx, []string{"r"}))
			events := keys.Of(s).Events("runs")
			if ttl := rdb.PTTL(ctx, events).Val(); ttl <= 0 || ttl > time.Minute {
				t.Errorf("stream of the emptied thread: TTL %v, want at most a minute", ttl)
			}
			must(t, rdb.Persist(ctx, events).Err())
			must(t, s.DeleteThread(ctx, "runs"))
			if ttl := rdb.PTTL(ctx, events).Val(); ttl <= 0 || ttl > time.Minute {
				t.Errorf("stream after DeleteThread of the unknown thread: TTL %v, want at most a minute", ttl)
			}
		})
	}
}
