package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// blockLimit is the longest any call may block Redis in these tests: the
// worst PING latency seen by a second connection and the worst SLOWLOG
// entry. The target is 20 ms; the margin covers a loaded 2-core CI machine
// running the race detector.
const blockLimit = 50 * time.Millisecond

// fatSteps and fatWrites shape TestBoundedAtScale's chain of large
// ancestors: its checkpoints, and the pending writes of each.
const fatSteps, fatWrites = 400, 400

// largeSteps is the number of checkpoints of TestBoundedAtScale's thread of
// large values, each with a new 1 MiB value.
const largeSteps = 60

// largeChain writes n checkpoints on thread th, each with a new 1 MiB value
// of channel "big" (checkpoint i's starts with i), and returns the last
// config and the IDs, oldest first.
func largeChain(t *testing.T, s *redissaver.Saver, th string, n int) (checkpoint.Config, []string) {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: th}
	var ids []string
	for i := range n {
		ver := fmt.Sprint(i + 1)
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(),
			ChannelValues:   map[string]any{"big": fmt.Sprint(i, strings.Repeat("x", 1<<20))},
			ChannelVersions: map[string]string{"big": ver}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, nil, map[string]string{"big": ver}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cp.ID)
	}
	return cfg, ids
}

// scaleChain writes a chain of n checkpoints on thread th, all of run
// "run-"+th: "log" is a delta channel seeded at the root and written once
// per step; "msgs" gets a new value every 100 steps. It returns the last
// config.
func scaleChain(t *testing.T, s *redissaver.Saver, th string, n int) checkpoint.Config {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: th}
	var msgs string
	for i := range n {
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
		nv := map[string]string{}
		if i == 0 {
			cp.ChannelValues["log"] = checkpoint.DeltaSnapshot{Value: "seed"}
			cp.ChannelVersions["log"], nv["log"] = "1", "1"
		}
		if i%100 == 0 {
			msgs = s.NextVersion(msgs)
			cp.ChannelValues["msgs"] = fmt.Sprint("m", i)
			nv["msgs"] = msgs
		}
		cp.ChannelVersions["msgs"] = msgs
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i, "run_id": "run-" + th}, nv); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "log", Value: i}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// reader reads the latest checkpoint of a thread in a loop until stopped,
// and reports any answer but want (want "" accepts not found) or
// ErrNotFound, and ErrDataLoss always.
func reader(t *testing.T, s *redissaver.Saver, th string, want func() string) (stop func() int) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	var reads atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			tup, err := s.GetTuple(context.Background(), checkpoint.Config{ThreadID: th})
			reads.Add(1)
			switch w := want(); {
			case errors.Is(err, checkpoint.ErrNotFound):
			case err != nil:
				t.Errorf("reader of %s: %v", th, err)
				return
			case w != "" && tup.Checkpoint.ID != w:
				t.Errorf("reader of %s: latest %s, want %s", th, tup.Checkpoint.ID, w)
				return
			}
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		return int(reads.Load())
	}
}

// count lists a thread and counts its checkpoints.
func count(t *testing.T, s *redissaver.Saver, th string) int {
	t.Helper()
	n := 0
	for _, err := range s.List(context.Background(), checkpoint.ListQuery{ThreadID: th}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestBoundedAtScale builds two threads of 20,000 checkpoints (or
// REDCHECK_SCALE: `make scale` runs 200,000 and 1,000,000), then runs
// every whole-thread operation while another connection PINGs and another
// goroutine reads the thread's latest checkpoint: the worst PING and the
// worst SLOWLOG entry stay within blockLimit, the reader never sees an
// older or a partial checkpoint, and each operation's result is checked.
func TestBoundedAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 40,000 checkpoints")
	}
	n := scale(t, "REDCHECK_SCALE", 20000)
	rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t), PoolSize: 16})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()

	start := time.Now()
	var last, runs checkpoint.Config
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); last = scaleChain(t, s, "big", n) }()
	go func() { defer wg.Done(); runs = scaleChain(t, s, "runs", n) }()
	wg.Wait()
	if t.Failed() {
		return
	}
	// A chain of large ancestors: 400 pending writes on each, so that a
	// step of delta history is bounded by the fields it reads, not only by
	// its ancestors (250 of these took 140 ms when it was not).
	fat := deltaChain(t, s, "fat", fatSteps, fatWrites-1)
	// A thread of large values: each checkpoint a new 1 MiB value, so that
	// every step that reads values is bounded by their bytes, not only by
	// their number (a List page, a copy, a check or a sweep of the values
	// read 64 MiB in one call, 75-384 ms, when it was not).
	large, _ := largeChain(t, s, "large", largeSteps)
	t.Logf("built 2 x %d checkpoints, %d with %d writes each, %d with a 1 MiB value each, in %v", n, fatSteps, fatWrites, largeSteps, time.Since(start))
	// PING from redis-cli: this test's own garbage collector and scheduler,
	// busy with whole-thread answers, must not count as Redis blocking.
	// SLOWLOG from 5 ms: fewer entries, so a long run keeps its slowest.
	m := redistest.NewBlockMeter(t, rdb, redistest.BlockMeterOptions{RedisCLI: true, SlowerThan: 5 * time.Millisecond})
	latest := func(id string) func() string { return func() string { return id } }
	var copied atomic.Bool

	ops := []struct {
		name, thread string
		want         func() string
		run          func() error
	}{
		{"delta channel history", "big", latest(last.CheckpointID), func() error {
			h, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: "big"}, []string{"log"})
			if err != nil {
				return err
			}
			if got := h["log"]; !got.HasSeed || len(got.Writes) != n-1 {
				return fmt.Errorf("history: seed %v, %d writes, want %d", got.HasSeed, len(got.Writes), n-1)
			}
			return nil
		}},
		{"delta channel history, large ancestors", "fat", func() string { return "" }, func() error {
			h, err := s.DeltaChannelHistory(ctx, fat, []string{"log"})
			if err != nil {
				return err
			}
			if got := h["log"]; !got.HasSeed || len(got.Writes) != (fatSteps-1)*fatWrites {
				return fmt.Errorf("history: seed %v, %d writes, want %d", got.HasSeed, len(got.Writes), (fatSteps-1)*fatWrites)
			}
			return s.DeleteThread(ctx, "fat")
		}},
		{"verify", "big", latest(last.CheckpointID), func() error {
			res, err := s.Verify(ctx, "big")
			if err != nil {
				return err
			}
			if len(res.Violations) != 0 || res.Checkpoints != n {
				return fmt.Errorf("verify: %d checkpoints, violations %v", res.Checkpoints, res.Violations)
			}
			return nil
		}},
		{"copy thread", "copy", func() string {
			if copied.Load() {
				return last.CheckpointID
			}
			return ""
		}, func() error {
			if err := s.CopyThread(ctx, "big", "copy"); err != nil {
				return err
			}
			copied.Store(true)
			if got := count(t, s, "copy"); got != n {
				return fmt.Errorf("copy holds %d checkpoints, want %d", got, n)
			}
			a, err := s.GetTuple(ctx, last)
			if err != nil {
				return err
			}
			b, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "copy", CheckpointID: last.CheckpointID})
			if err != nil {
				return err
			}
			if fmt.Sprint(a.Checkpoint, a.Metadata, a.PendingWrites) != fmt.Sprint(b.Checkpoint, b.Metadata, b.PendingWrites) {
				return fmt.Errorf("copy differs:\n%v\n%v", a, b)
			}
			return nil
		}},
		{"prune keep_latest", "big", latest(last.CheckpointID), func() error {
			if err := s.Prune(ctx, []string{"big"}, checkpoint.PruneKeepLatest); err != nil {
				return err
			}
			if got := count(t, s, "big"); got != 1 {
				return fmt.Errorf("%d checkpoints left, want 1", got)
			}
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "big"})
			if err != nil || tup.Checkpoint.ChannelValues["msgs"] != fmt.Sprint("m", (n-1)/100*100) {
				return fmt.Errorf("latest after prune: %v, %v", tup, err)
			}
			return nil
		}},
		{"delete for runs", "runs", func() string { return "" }, func() error {
			if err := s.DeleteForRuns(ctx, []string{"run-runs"}); err != nil {
				return err
			}
			if _, err := s.GetTuple(ctx, runs); !errors.Is(err, checkpoint.ErrNotFound) {
				return fmt.Errorf("GetTuple after delete for runs: %v", err)
			}
			return nil
		}},
		{"delete thread", "copy", func() string { return "" }, func() error {
			if err := s.DeleteThread(ctx, "copy"); err != nil {
				return err
			}
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "copy"}); !errors.Is(err, checkpoint.ErrNotFound) {
				return fmt.Errorf("GetTuple after delete: %v", err)
			}
			return nil
		}},
		{"large values: list, verify, copy, prune, delete", "large", latest(large.CheckpointID), func() error {
			got := 0
			for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "large"}) {
				if err != nil {
					return err
				}
				if v, _ := tup.Checkpoint.ChannelValues["big"].(string); len(v) < 1<<20 {
					return fmt.Errorf("list: a value of %d bytes", len(v))
				}
				got++
			}
			if got != largeSteps {
				return fmt.Errorf("list: %d checkpoints, want %d", got, largeSteps)
			}
			res, err := s.Verify(ctx, "large")
			if err != nil {
				return err
			}
			if len(res.Violations) != 0 || res.Checkpoints != largeSteps {
				return fmt.Errorf("verify: %d checkpoints, violations %v", res.Checkpoints, res.Violations)
			}
			if err := s.CopyThread(ctx, "large", "large-copy"); err != nil {
				return err
			}
			if err := s.Prune(ctx, []string{"large-copy"}, checkpoint.PruneKeepLatest); err != nil {
				return err
			}
			if got := count(t, s, "large-copy"); got != 1 {
				return fmt.Errorf("%d checkpoints left in the pruned copy, want 1", got)
			}
			if err := s.DeleteThread(ctx, "large-copy"); err != nil {
				return err
			}
			return s.DeleteThread(ctx, "large")
		}},
		{"sweep", "big", latest(last.CheckpointID), func() error {
			_, err := s.Sweep(ctx)
			return err
		}},
	}
	for _, op := range ops {
		m.Reset(t)
		stopReader := reader(t, s, op.thread, op.want)
		began := time.Now()
		err := op.run()
		took := time.Since(began)
		reads := stopReader()
		ping, slow, what := m.Read(t)
		t.Logf("%s: %v; %d concurrent reads; worst PING %v; worst SLOWLOG entry %v %s", op.name, took, reads, ping, slow, what)
		if err != nil {
			t.Errorf("%s: %v", op.name, err)
		}
		if ping > blockLimit || slow > blockLimit {
			t.Errorf("%s blocked Redis: worst PING %v, worst SLOWLOG entry %v (%s); limit %v", op.name, ping, slow, what, blockLimit)
		}
	}
	// Only the pruned thread is left: its head, indexes, one checkpoint and
	// the values it points to.
	keys, err := rdb.Keys(ctx, keys.Of(s).Prefix()+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var data []string
	for _, k := range keys {
		if !strings.HasSuffix(k, ":events") && !strings.HasSuffix(k, ":feed") && !strings.HasSuffix(k, ":meta") && !strings.HasSuffix(k, "}:threads") {
			data = append(data, k)
		}
	}
	if len(data) != 8 {
		t.Errorf("%d data keys left, want 8 besides the registries (shard index, run index, head, ns set, thread index, ns index, checkpoint, values): %v", len(data), data)
	}
}

// scale returns the number of checkpoints the environment variable name
// asks a scale test for, def when it is unset.
func scale(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 {
		t.Fatalf("%s=%q: want a number of checkpoints", name, v)
	}
	return n
}
