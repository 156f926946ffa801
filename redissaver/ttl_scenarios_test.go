package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// clockTier is a Redis to run a lease scenario on, with a way to let its
// clock run: miniredis moves its server clock (TIME in scripts follows
// it), a real redis-server is waited for. ttl is the lease the scenario
// uses there.
type clockTier struct {
	name string
	ttl  time.Duration
	open func(t *testing.T) (rdb redis.UniversalClient, advance func(time.Duration))
}

var clockTiers = []clockTier{
	{"miniredis", time.Hour, func(t *testing.T) (redis.UniversalClient, func(time.Duration)) {
		mr, rdb := redistest.Mini(t)
		now := time.Now()
		mr.SetTime(now)
		return rdb, func(d time.Duration) {
			now = now.Add(d)
			mr.SetTime(now)
		}
	}},
	// Long enough that a pause of the loaded, race-instrumented test
	// process between two writes (at most ttl/11 apart) never outlasts it.
	{"redis", 1500 * time.Millisecond, func(t *testing.T) (redis.UniversalClient, func(time.Duration)) {
		return redistest.Real(t), time.Sleep
	}},
}

// TestLeaseKeepsDeltaSeed: a thread that lives through regular writes for
// three times its TTL keeps every checkpoint, its delta channel's seed
// included (data keys have no Redis TTL of their own, and each write
// renews the whole thread's lease): DeltaChannelHistory returns all 34
// writes, oldest first, with HasSeed, List every checkpoint, and Verify
// finds nothing wrong. Once the writes stop, the thread expires whole.
func TestLeaseKeepsDeltaSeed(t *testing.T) {
	const n = 34
	for _, tier := range clockTiers {
		t.Run(tier.name, func(t *testing.T) {
			rdb, advance := tier.open(t)
			s := newSaver(t, rdb, redissaver.Options{TTL: tier.ttl})
			ctx := context.Background()
			step := 3 * tier.ttl / n // 34 writes spread over 3 TTLs
			cfg := checkpoint.Config{ThreadID: "long-lived"}
			var ids, want []string
			for i := range n {
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
				var nv map[string]string
				if i == 0 {
					cp.ChannelValues["log"] = checkpoint.DeltaSnapshot{Value: []any{"seed"}}
					cp.ChannelVersions["log"] = "1"
					nv = map[string]string{"log": "1"}
				}
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, nv); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				w := fmt.Sprint("w", i)
				if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "log", Value: w}}, "task", ""); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				ids, want = append(ids, cfg.CheckpointID), append(want, w)
				advance(step)
			}
			// The last checkpoint, whose history is every write above.
			last := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}
			cfg, err := s.Put(ctx, cfg, last, checkpoint.Metadata{"step": n}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, last.ID)

			h, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: "long-lived"}, []string{"log"})
			if err != nil {
				t.Fatal(err)
			}
			got := h["log"]
			var values []string
			for _, w := range got.Writes {
				values = append(values, fmt.Sprint(w.Value))
			}
			if !got.HasSeed || fmt.Sprint(got.Seed) != fmt.Sprint(checkpoint.DeltaSnapshot{Value: []any{"seed"}}) || !slices.Equal(values, want) {
				t.Errorf("history after %v of writes (TTL %v): seed %v %v, writes %v; want the seed and %v",
					time.Duration(n)*step, tier.ttl, got.HasSeed, got.Seed, values, want)
			}
			var listed []string
			for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "long-lived"}) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, tup.Checkpoint.ID)
			}
			slices.Reverse(listed)
			if !slices.Equal(listed, ids) {
				t.Errorf("List: %d checkpoints, want %d", len(listed), len(ids))
			}
			res := requireSound(t, s, "long-lived")
			if res.Checkpoints != n+1 {
				t.Errorf("Verify examined %d checkpoints, want %d", res.Checkpoints, n+1)
			}
			if vs, err := s.Check(ctx, ""); err != nil || len(vs) != 0 {
				t.Errorf("Check of every thread: %v, %v", vs, err)
			}

			// No more writes: the thread expires whole, and Sweep leaves
			// nothing of it.
			advance(tier.ttl + tier.ttl/10)
			if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("GetTuple after the lease: %v, want ErrNotFound", err)
			}
			if _, err := s.DeltaChannelHistory(ctx, cfg, []string{"log"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("DeltaChannelHistory after the lease: %v, want ErrNotFound", err)
			}
			if _, err := s.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if nk, _ := footprint(t, rdb, s.Layout().Prefix()); nk != 0 {
				t.Errorf("%d keys left after the lease and Sweep", nk)
			}
		})
	}
}
