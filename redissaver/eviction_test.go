package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// evCheckpoint is what the eviction tests wrote as one checkpoint: its id,
// its channel values printed, and the values of its pending writes.
type evCheckpoint struct {
	id     string
	values string
	writes []string
}

// evThread is what the eviction tests wrote to one thread, in order.
type evThread struct {
	name string
	cps  []evCheckpoint
	// stopped: a write to the thread failed (ErrDataLoss, or the server
	// out of memory); nothing more was written to it.
	stopped bool
}

// evSeed is the seed of the delta channel "log", stored by each root.
var evSeed = checkpoint.DeltaSnapshot{Value: []any{"seed"}}

// evPayload is the value of channel "big" at a step: 2 KiB, so that a few
// MB of memory fill within a few hundred writes.
func evPayload(thread string, step int) string {
	return fmt.Sprintf("%s-%d-%s", thread, step, strings.Repeat("x", 2048))
}

// evWrite writes the next checkpoint of th (a new version of "big", with
// one write to "log"), and records it when both calls succeed. It returns
// the error of the first call that failed.
func evWrite(ctx context.Context, s *redissaver.Saver, th *evThread) error {
	step := len(th.cps)
	cfg := checkpoint.Config{ThreadID: th.name}
	vals := map[string]any{"big": evPayload(th.name, step), "cfg": "c"}
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: vals,
		ChannelVersions: map[string]string{"big": strconv.Itoa(step + 1), "cfg": "1"}}
	nv := map[string]string{"big": strconv.Itoa(step + 1)}
	if step == 0 {
		vals["log"], cp.ChannelVersions["log"], nv["cfg"], nv["log"] = evSeed, "1", "1", "1"
	} else {
		cfg.CheckpointID = th.cps[step-1].id
	}
	stored, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step}, nv)
	if err != nil {
		return err
	}
	w := fmt.Sprint("w", step)
	rec := evCheckpoint{id: cp.ID, values: fmt.Sprint(vals)}
	if err := s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "log", Value: w}}, "task", ""); err != nil {
		// The checkpoint is stored, its write is not.
		th.cps = append(th.cps, rec)
		return err
	}
	rec.writes = []string{w}
	th.cps = append(th.cps, rec)
	return nil
}

// evictedKeys reads INFO stats evicted_keys.
func evictedKeys(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	return infoInt(t, rdb, "stats", "evicted_keys")
}

func infoInt(t *testing.T, rdb *redis.Client, section, field string) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// evictionServer starts a redis-server with policy, creates a saver with
// opts on it, then caps its memory a few MB above what it uses with nothing
// written.
func evictionServer(t *testing.T, policy string, opts redissaver.Options) (*redis.Client, *redissaver.Saver) {
	t.Helper()
	addr := redistest.StartServer(t, "--maxmemory-policy", policy)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	opts.Prefix = "ev"
	s, err := redissaver.New(ctx, rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.LoadScripts(ctx))
	base := infoInt(t, rdb, "memory", "used_memory")
	limit := base + 3<<20
	must(t, rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err())
	t.Logf("%s: used_memory %d bytes with nothing written; maxmemory %d", policy, base, limit)
	return rdb, s
}

// evFill writes checkpoints round robin over threads until the server has
// evicted keys, then as many rounds again as a third of those (so writes
// meet threads that lost keys), at most maxRounds in all. accept says
// whether a failed write is acceptable (the thread then gets no more
// writes); any other error fails the test.
func evFill(t *testing.T, rdb *redis.Client, s *redissaver.Saver, threads []*evThread, maxRounds int, accept func(error) bool) (rounds int, failed map[string]int) {
	t.Helper()
	ctx := context.Background()
	failed = map[string]int{}
	extra := -1
	for rounds = 0; rounds < maxRounds && extra != 0; rounds++ {
		for _, th := range threads {
			if th.stopped {
				continue
			}
			if err := evWrite(ctx, s, th); err != nil {
				if !accept(err) {
					t.Fatalf("write %d of %s: %v", len(th.cps), th.name, err)
				}
				th.stopped = true
				failed[errKind(err)]++
			}
		}
		switch {
		case extra > 0:
			extra--
		case extra < 0 && evictedKeys(t, rdb) > 0:
			extra = rounds/3 + 1
		}
	}
	return rounds, failed
}

// errKind names an error for the report: the sentinel it wraps, or the
// first word of a Redis error.
func errKind(err error) string {
	switch {
	case errors.Is(err, checkpoint.ErrDataLoss):
		return "ErrDataLoss"
	case errors.Is(err, checkpoint.ErrNotFound):
		return "ErrNotFound"
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return strings.Fields(rerr.Error())[0]
	}
	return err.Error()
}

// evVerify reads every thread every way and compares with what was
// written. A read may fail with ErrDataLoss when allowLoss; anything else
// (another error, or an answer that differs from what was written last) is
// a test failure. It returns the count of ErrDataLoss answers per read.
func evVerify(t *testing.T, s *redissaver.Saver, threads []*evThread, allowLoss bool) map[string]int {
	t.Helper()
	ctx := context.Background()
	losses := map[string]int{}
	// check judges one read: ok reports an exact answer.
	check := func(what, thread string, err error, ok bool, got, want string) {
		t.Helper()
		switch {
		case err != nil && allowLoss && errors.Is(err, checkpoint.ErrDataLoss):
			losses[what]++
		case err != nil:
			t.Errorf("%s of %s: %v", what, thread, err)
		case !ok:
			t.Errorf("%s of %s answered with a nil error:\n got %s\nwant %s", what, thread, got, want)
		}
	}
	var every []string
	for _, th := range threads {
		if len(th.cps) == 0 {
			continue
		}
		last := th.cps[len(th.cps)-1]
		cfg := checkpoint.Config{ThreadID: th.name}

		tup, err := s.GetTuple(ctx, cfg)
		got := tupleText(tup)
		want := cpText(last)
		check("GetTuple latest", th.name, err, got == want, got, want)

		for i, cp := range th.cps {
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th.name, CheckpointID: cp.id})
			got, want := tupleText(tup), cpText(cp)
			check(fmt.Sprint("GetTuple by id (", i, ")"), th.name, err, got == want, got, want)
		}

		var listed []string
		var lerr error
		for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th.name}) {
			if err != nil {
				lerr = err
				break
			}
			listed = append(listed, tupleText(tup))
		}
		var wantList []string
		for _, cp := range slices.Backward(th.cps) {
			wantList = append(wantList, cpText(cp))
		}
		if lerr == nil || !errors.Is(lerr, checkpoint.ErrDataLoss) {
			check("List thread", th.name, lerr, slices.Equal(listed, wantList), fmt.Sprintf("%d checkpoints", len(listed)), fmt.Sprintf("%d checkpoints", len(wantList)))
		} else {
			losses["List thread"]++
			// What came before the error is right, in order.
			if !slices.Equal(listed, wantList[:min(len(listed), len(wantList))]) {
				t.Errorf("List of %s: the %d checkpoints before ErrDataLoss differ from what was written", th.name, len(listed))
			}
		}

		h, err := s.DeltaChannelHistory(ctx, cfg, []string{"log"})
		var wantWrites []string
		for _, cp := range th.cps[:len(th.cps)-1] {
			wantWrites = append(wantWrites, cp.writes...)
		}
		got, want = historyText(h["log"]), fmt.Sprint(true, evSeed, wantWrites)
		check("DeltaChannelHistory", th.name, err, got == want, got, want)

		for _, cp := range th.cps {
			every = append(every, cp.id)
		}
	}

	slices.Sort(every)
	slices.Reverse(every)
	var listed []string
	var lerr error
	for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
		if err != nil {
			lerr = err
			break
		}
		listed = append(listed, tup.Checkpoint.ID)
	}
	if lerr != nil && allowLoss && errors.Is(lerr, checkpoint.ErrDataLoss) {
		losses["List all"]++
		if !slices.Equal(listed, every[:min(len(listed), len(every))]) {
			t.Errorf("List of every thread: the %d checkpoints before ErrDataLoss differ from what was written", len(listed))
		}
	} else {
		check("List all", "every thread", lerr, slices.Equal(listed, every), fmt.Sprintf("%d checkpoints", len(listed)), fmt.Sprintf("%d checkpoints", len(every)))
	}
	return losses
}

func cpText(cp evCheckpoint) string {
	return fmt.Sprint(cp.id, " ", cp.values, " ", cp.writes)
}

func tupleText(tup *checkpoint.Tuple) string {
	if tup == nil {
		return "<nil>"
	}
	var writes []string
	for _, w := range tup.PendingWrites {
		writes = append(writes, fmt.Sprint(w.Value))
	}
	return fmt.Sprint(tup.Checkpoint.ID, " ", tup.Checkpoint.ChannelValues, " ", writes)
}

func historyText(h checkpoint.DeltaHistory) string {
	var writes []string
	for _, w := range h.Writes {
		writes = append(writes, fmt.Sprint(w.Value))
	}
	return fmt.Sprint(h.HasSeed, h.Seed, writes)
}

func evThreads(n int) []*evThread {
	out := make([]*evThread, n)
	for i := range out {
		out[i] = &evThread{name: fmt.Sprint("ev-", i)}
	}
	return out
}

// TestEvictionAllKeys: on a server that evicts any key (allkeys-lru, a
// memory limit 3 MB above its empty footprint), a saver created with
// AcceptEviction writes 20 threads until keys are evicted and a third as
// long again. Then every read of every thread (latest, each checkpoint by
// id, List of the thread and of every thread, delta history) either answers
// exactly what was written last or fails with checkpoint.ErrDataLoss:
// never an older checkpoint as the latest, missing values, a truncated
// history or a shorter list with a nil error.
func TestEvictionAllKeys(t *testing.T) {
	rdb, s := evictionServer(t, "allkeys-lru", redissaver.Options{AcceptEviction: true, Shards: 4})
	threads := evThreads(20)
	start := time.Now()
	rounds, failed := evFill(t, rdb, s, threads, 400, func(err error) bool { return errors.Is(err, checkpoint.ErrDataLoss) })
	evicted := evictedKeys(t, rdb)
	t.Logf("%d rounds of writes in %v; %d keys evicted; failed writes %v", rounds, time.Since(start), evicted, failed)
	if evicted == 0 {
		t.Fatal("no key was evicted: the test proves nothing")
	}
	start = time.Now()
	losses := evVerify(t, s, threads, true)
	t.Logf("reads in %v; answers ErrDataLoss: %v; keys evicted by then: %d", time.Since(start), losses, evictedKeys(t, rdb))
}

// TestEvictionVolatile: under volatile-lru, with Options.TTL, the saver's
// data keys carry no Redis TTL, so the server evicts none of them: only
// event streams (which expire) go. Writes go on until the server refuses
// them for lack of memory, as a Redis error (nothing of the refused write
// stored); every read then answers exactly what was written.
func TestEvictionVolatile(t *testing.T) {
	rdb, s := evictionServer(t, "volatile-lru", redissaver.Options{TTL: time.Hour, Shards: 4})
	threads := evThreads(20)
	start := time.Now()
	rounds, failed := evFill(t, rdb, s, threads, 400, func(err error) bool {
		return redis.HasErrorPrefix(errors.Unwrap(err), "OOM") || strings.Contains(err.Error(), "OOM command not allowed")
	})
	evicted := evictedKeys(t, rdb)
	t.Logf("%d rounds of writes in %v; %d keys evicted; failed writes %v", rounds, time.Since(start), evicted, failed)
	if evicted == 0 {
		t.Fatal("no key was evicted: the test proves nothing")
	}
	ctx := context.Background()
	ks, err := rdb.Keys(ctx, "ev:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	streams := 0
	for _, k := range ks {
		if strings.HasSuffix(k, ":events") {
			streams++
		}
	}
	t.Logf("%d of %d thread event streams left", streams, len(threads))
	if losses := evVerify(t, s, threads, false); len(losses) != 0 {
		t.Errorf("losses: %v", losses)
	}
	for _, th := range threads {
		requireSound(t, s, th.name)
	}
}

// TestPutOverLostIndex: a Put into a thread that lost one of its indexes
// (evicted, say) must fail with ErrDataLoss and write nothing, instead of
// starting a new, shorter index, which every later read would take
// as whole: List of the thread returns only the checkpoints written after
// the loss, GetTuple of an older id answers ErrNotFound, and the delta
// history stops short with HasSeed false, each with a nil error (seen in
// TestEvictionAllKeys). Checking the generation in put.lua before the
// first write (check_gen, and the thread index exists) fixes it.
func TestPutOverLostIndex(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, lose := range []string{"namespace index", "thread index", "namespace set"} {
				t.Run(lose, func(t *testing.T) {
					rdb := b.client(t)
					s := newSaver(t, rdb, redissaver.Options{Shards: 4})
					ctx := context.Background()
					last := safetyThread(t, s, "victim")
					snap := readAll(t, s, last)
					l := keys.Of(s)
					gen := rdb.HGet(ctx, l.Head("victim"), "g").Val()
					key := map[string]string{
						"namespace index": l.Index("victim", gen, ""),
						"thread index":    l.ThreadIndex("victim", gen),
						"namespace set":   l.Namespaces("victim", gen),
					}[lose]
					if n := rdb.Del(ctx, key).Val(); n != 1 {
						t.Fatalf("key %s not there", key)
					}
					cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}
					if _, err := s.Put(ctx, last, cp, nil, nil); !errors.Is(err, checkpoint.ErrDataLoss) {
						t.Errorf("Put after losing the %s: %v, want ErrDataLoss", lose, err)
					}
					got := readAll(t, s, last)
					for what, err := range got.errs {
						if err != nil && !errors.Is(err, checkpoint.ErrDataLoss) {
							t.Errorf("%s: %v, want the answer before the loss or ErrDataLoss", what, err)
						}
						if err == nil && got.out[what] != snap.out[what] {
							t.Errorf("%s changed with a nil error:\n got %s\nwant %s", what, got.out[what], snap.out[what])
						}
					}
				})
			}
		})
	}
}

// TestThreadLostWhole: a thread whose head and registry entry are both
// gone (allkeys-* eviction took the head, then the shard's whole registry)
// reads as a thread that never existed: GetTuple answers ErrNotFound and a
// Put silently starts it anew, orphaning its data. Telling "lost" from
// "never written" needs something that outlives the registry (a marker
// member in every shard registry, written with the meta key, whose absence
// reads as DATALOSS): a format change for the lead. Seen in
// TestEvictionAllKeys about one run in three.
func TestThreadLostWhole(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{Shards: 4})
			ctx := context.Background()
			last := safetyThread(t, s, "victim")
			l := keys.Of(s)
			must(t, rdb.Del(ctx, l.Head("victim"), l.Threads(l.Shard("victim"))).Err())
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "victim"}); !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Errorf("GetTuple: %v, want ErrDataLoss", err)
			}
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}
			if _, err := s.Put(ctx, last, cp, nil, nil); !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Errorf("Put: %v, want ErrDataLoss", err)
			}
		})
	}
}

// TestPutOverLostParent: the values hash and the parent's checkpoint hash
// are lost (evicted together, say); a Put of the parent's child that names
// the parent's versions without writing them must fail with ErrDataLoss and
// write nothing, instead of writing the empty marker for versions it cannot
// find, which would make every older checkpoint read those channels back
// absent with a nil error (seen in TestEvictionAllKeys, staged Puts
// included: the staged HSET makes the values hash anew).
func TestPutOverLostParent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			cfg := chain(t, s, "t", 3)
			snap := readAll(t, s, cfg)
			l := keys.Of(s)
			gen := rdb.HGet(ctx, l.Head("t"), "g").Val()
			for _, k := range []string{l.Blobs("t", gen, ""), l.Checkpoint("t", gen, "", cfg.CheckpointID)} {
				if n := rdb.Del(ctx, k).Val(); n != 1 {
					t.Fatalf("key %s not there", k)
				}
			}
			before := rawState(t, rdb, l.Prefix())
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "new"},
				ChannelVersions: map[string]string{"a": "9", "b": "1"}}
			if _, err := s.Put(ctx, cfg, cp, nil, map[string]string{"a": "9"}); !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Errorf("Put over a lost parent and values hash: %v, want ErrDataLoss", err)
			}
			if after := rawState(t, rdb, l.Prefix()); !slices.Equal(after, before) {
				t.Errorf("the refused Put wrote:\nbefore %q\nafter  %q", before, after)
			}
			got := readAll(t, s, cfg)
			for what, err := range got.errs {
				if err == nil && got.out[what] != snap.out[what] {
					t.Errorf("%s changed with a nil error:\n got %s\nwant %s", what, got.out[what], snap.out[what])
				}
			}
		})
	}
}

// TestShardIndexLost: a listing of every thread reads each shard's index of
// every checkpoint. That index gone while the shard's registry lists a
// thread was lost (every registered thread has a checkpoint), and the
// listing is ErrDataLoss, not the other shards' checkpoints alone; so is a
// shard whose registry lost its marker with the index. A shard whose last
// thread was deleted, or whose last checkpoint a DeleteForRuns took, lists
// nothing and is no error.
func TestShardIndexLost(t *testing.T) {
	listAll := func(s *redissaver.Saver) (int, error) {
		n := 0
		for _, err := range s.List(context.Background(), checkpoint.ListQuery{}) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{Shards: 4})
			ctx := context.Background()
			l := keys.Of(s)
			put := func(th, run string) {
				t.Helper()
				_, err := s.Put(ctx, checkpoint.Config{ThreadID: th}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()},
					checkpoint.Metadata{"run_id": run}, nil)
				must(t, err)
			}
			// Threads in three shards: "victim" alone in its shard, "gone" and
			// "runs" each alone in another.
			victim, gone, runs := threadsIn(l, 0, 1)[0], threadsIn(l, 1, 1)[0], threadsIn(l, 2, 1)[0]
			put(victim, "keep")
			put(gone, "keep")
			put(runs, "doomed")
			must(t, s.DeleteThread(ctx, gone))
			must(t, s.DeleteForRuns(ctx, []string{"doomed"}))
			if n, err := listAll(s); n != 1 || err != nil {
				t.Fatalf("List of every thread: %d checkpoints, %v; want 1", n, err)
			}
			must(t, rdb.Del(ctx, l.All(0)).Err())
			if _, err := listAll(s); !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Errorf("List of every thread without shard 0's index: %v, want ErrDataLoss", err)
			}
			must(t, rdb.Del(ctx, l.Threads(0)).Err())
			if _, err := listAll(s); !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Errorf("List of every thread without shard 0's index and registry: %v, want ErrDataLoss", err)
			}
		})
	}
}

// TestWriteOverLostShardIndex: a Put or a CopyThread into a shard whose index
// of every checkpoint is gone while its registry lists a thread would make
// it anew, holding its own checkpoint alone, and a listing of every thread
// would then answer without the others with a nil error. Both refuse with
// ErrDataLoss and write nothing (but the copy's staging generation, queued
// for reclaim when the copy begins).
func TestWriteOverLostShardIndex(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{Shards: 2})
			ctx := context.Background()
			l := keys.Of(s)
			same := threadsIn(l, 0, 3)
			live, fresh, src := same[0], same[1], same[2]
			var lastLive checkpoint.Config
			for _, th := range []string{live, src} {
				var err error
				lastLive, err = s.Put(ctx, checkpoint.Config{ThreadID: th}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
				must(t, err)
			}
			must(t, rdb.Del(ctx, l.All(0)).Err())
			before := rawState(t, rdb, l.Prefix())
			for name, put := range map[string]func() error{
				"Put to a live thread": func() error {
					_, err := s.Put(ctx, lastLive, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
					return err
				},
				"Put to a new thread": func() error {
					_, err := s.Put(ctx, checkpoint.Config{ThreadID: fresh}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
					return err
				},
				"CopyThread": func() error { return s.CopyThread(ctx, src, fresh) },
			} {
				if err := put(); !errors.Is(err, checkpoint.ErrDataLoss) {
					t.Errorf("%s: %v, want ErrDataLoss", name, err)
				}
			}
			after := slices.DeleteFunc(rawState(t, rdb, l.Prefix()), func(k string) bool { return strings.Contains(k, "}:gc ") })
			if !slices.Equal(after, before) {
				t.Errorf("the refused writes wrote:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// threadsIn returns n thread IDs of shard (t0, t1, ... in order).
func threadsIn(l keys.Layout, shard, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		if th := fmt.Sprint("t", i); l.Shard(th) == shard {
			out = append(out, th)
		}
	}
	return out
}
