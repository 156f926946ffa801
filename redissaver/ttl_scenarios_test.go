package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
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
			if vs, err := violations(ctx, s, ""); err != nil || len(vs) != 0 {
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
			if nk, _ := footprint(t, rdb, keys.Of(s).Prefix()); nk != 0 {
				t.Errorf("%d keys left after the lease and Sweep", nk)
			}
		})
	}
}

// shardState counts what a shard keeps of its threads: registry entries,
// shard index entries, reclaim queue entries, run sets and their members,
// and data keys (every key of the shard but its registries, queue, feed
// and event streams).
type shardState struct {
	threads, all, gc, runSets, runMembers, dataKeys int64
}

func readShard(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver, n int) shardState {
	t.Helper()
	ctx := context.Background()
	l := keys.Of(s)
	// threads: registry entries, its marker member "" aside.
	st := shardState{threads: rdb.ZCard(ctx, l.Threads(n)).Val() - 1, all: rdb.ZCard(ctx, l.All(n)).Val(), gc: rdb.ZCard(ctx, l.GC(n)).Val()}
	base := l.ShardBase(n)
	ks, err := rdb.Keys(ctx, base+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		switch {
		case k == l.Threads(n) || k == l.All(n) || k == l.GC(n) || k == l.Feed(n) || len(k) > 7 && k[len(k)-7:] == ":events":
		case len(k) > len(base)+4 && k[len(base):len(base)+4] == "run:":
			st.runSets++
			st.runMembers += rdb.SCard(ctx, k).Val()
		default:
			st.dataKeys++
		}
	}
	return st
}

// TestExpiredThreadsLeaveNothing: 4,000 threads (1,000 on miniredis, whose
// Lua is slow under the race detector) with a short lease expire unread. Nobody lists across threads; yet every Put retires one expired
// thread of its shard and reclaims 16 units, so writes to one thread drain
// its shard's registry one entry per Put (other shards untouched), and
// Sweep drains the rest: the registries, shard indexes, run sets, reclaim
// queues and data keys end holding the writer's thread only.
func TestExpiredThreadsLeaveNothing(t *testing.T) {
	for _, tier := range clockTiers {
		t.Run(tier.name, func(t *testing.T) {
			rdb, advance := tier.open(t)
			threads, ttl := 1000, tier.ttl
			if tier.name == "redis" {
				threads, ttl = 4000, 2*time.Second
			}
			s := newSaver(t, rdb, redissaver.Options{TTL: ttl})
			ctx := context.Background()
			l := keys.Of(s)
			start := time.Now()
			errs := make(chan error, 8)
			for g := range 8 {
				go func() {
					for i := g; i < threads; i += 8 {
						th := fmt.Sprint("leak-", i)
						cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"c": i}, ChannelVersions: map[string]string{"c": "1"}}
						if _, err := s.Put(ctx, checkpoint.Config{ThreadID: th}, cp, checkpoint.Metadata{"run_id": fmt.Sprint("run-", i%10)}, cp.ChannelVersions); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for range 8 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%d threads written in %v", threads, time.Since(start))
			advance(ttl + ttl/10)
			for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
				t.Fatalf("List after every lease ran out: %v, %v", tup, err)
			}
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "leak-7"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("GetTuple of an expired thread: %v", err)
			}

			// Writes alone: Puts to one thread drain its shard's registry,
			// one expired thread per Put; the other shards keep theirs.
			w := l.Shard("writer")
			before := make([]shardState, l.Shards())
			for n := range before {
				before[n] = readShard(t, rdb, s, n)
			}
			expired := before[w].threads
			if expired < int64(threads/l.Shards()/2) {
				t.Fatalf("shard %d holds %d registry entries before the writes; want about %d", w, expired, threads/l.Shards())
			}
			// The writer has no lease (a saver without TTL on the prefix): it
			// must outlive the checks below, which a loaded machine can make
			// longer than a lease of 2 s.
			writer, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: l.Prefix(), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			cfg := checkpoint.Config{ThreadID: "writer"}
			for j := int64(1); j <= expired; j++ {
				var err error
				if cfg, err = writer.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, checkpoint.Metadata{"run_id": "writer-run"}, nil); err != nil {
					t.Fatal(err)
				}
				// -1: the registry's marker member.
				if got := rdb.ZCard(ctx, l.Threads(w)).Val() - 1; got != expired-j+1 {
					t.Fatalf("after %d Puts the registry of shard %d holds %d entries, want %d (one expired thread retired per Put)", j, w, got, expired-j+1)
				}
			}
			after := readShard(t, rdb, s, w)
			// The writer's thread: its head, namespace set, thread and
			// namespace indexes, values hash (made with the namespace), and
			// one checkpoint hash per Put.
			want := shardState{threads: 1, all: expired, runSets: 1, runMembers: expired, dataKeys: 5 + expired}
			if after != want {
				t.Errorf("shard %d after %d Puts: %+v, want %+v (before: %+v)", w, expired, after, want, before[w])
			}
			for n := range before {
				if got := readShard(t, rdb, s, n); n != w && got != before[n] {
					t.Errorf("shard %d changed without a write: %+v, was %+v", n, got, before[n])
				}
			}

			// Sweep drains every other shard, in bounded steps.
			var meter *redistest.BlockMeter
			if tier.name == "redis" {
				meter = redistest.NewBlockMeter(t, rdb.(*redis.Client), redistest.BlockMeterOptions{RedisCLI: true})
			}
			start = time.Now()
			units, err := s.Sweep(ctx)
			took := time.Since(start)
			if meter != nil {
				ping, slow, what := meter.Read(t)
				meter.Stop()
				t.Logf("Sweep: %d units in %v, worst PING %v, worst SLOWLOG entry %v %s", units, took, ping, slow, what)
				if ping > blockLimit {
					t.Errorf("Sweep blocked Redis: worst PING %v, limit %v", ping, blockLimit)
				}
			} else {
				t.Logf("Sweep: %d units in %v", units, took)
			}
			if err != nil {
				t.Fatal(err)
			}
			for n := range l.Shards() {
				got := readShard(t, rdb, s, n)
				if n == w {
					if got != want {
						t.Errorf("writer's shard %d after Sweep: %+v, want %+v", n, got, want)
					}
				} else if got != (shardState{}) {
					t.Errorf("shard %d after Sweep: %+v, want nothing", n, got)
				}
			}
			if again, err := s.Sweep(ctx); err != nil || again != 0 {
				t.Errorf("a second Sweep: %d units, %v; want 0", again, err)
			}
		})
	}
}
