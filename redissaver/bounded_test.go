package redissaver_test

import (
	"context"
	"errors"
	"fmt"
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

// pingLoop PINGs on a connection of its own until stopped and returns the
// worst latency it saw.
func pingLoop(t *testing.T, addr string) (stop func() time.Duration) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	var worst atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			start := time.Now()
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Error(err)
				return
			}
			if d := int64(time.Since(start)); d > worst.Load() {
				worst.Store(d)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return func() time.Duration {
		close(done)
		wg.Wait()
		_ = c.Close()
		return time.Duration(worst.Load())
	}
}

// slowest returns the longest SLOWLOG entry since the last reset, and resets.
func slowest(t *testing.T, rdb *redis.Client) (time.Duration, string) {
	t.Helper()
	ctx := context.Background()
	entries, err := rdb.SlowLogGet(ctx, 128).Result()
	if err != nil {
		t.Fatal(err)
	}
	var worst time.Duration
	what := ""
	for _, e := range entries {
		if e.Duration > worst {
			worst, what = e.Duration, fmt.Sprint(e.Args[:min(2, len(e.Args))])
		}
	}
	if err := rdb.Do(ctx, "SLOWLOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	return worst, what
}

// TestBoundedAtScale builds a thread of 20,000 checkpoints, each with a
// write, then walks its delta history and deletes it while another
// connection PINGs: the worst PING and the worst SLOWLOG entry stay within
// blockLimit, and the results are checked.
func TestBoundedAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 20,000 checkpoints")
	}
	const n = 20000
	addr := redistest.StartServer(t, "--slowlog-log-slower-than", "5000")
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 16})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()

	// A chain of n checkpoints, each with a write to the delta channel
	// "log", seeded at the root.
	start := time.Now()
	deltaChain(t, s, "big", n)
	t.Logf("built %d checkpoints in %v", n, time.Since(start))
	slowest(t, rdb)

	ops := []struct {
		name string
		run  func() error
	}{
		{"delta channel history", func() error {
			h, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: "big"}, []string{"log"})
			if err != nil {
				return err
			}
			if got := h["log"]; !got.HasSeed || len(got.Writes) != n-1 {
				return fmt.Errorf("history: seed %v, %d writes, want %d", got.HasSeed, len(got.Writes), n-1)
			}
			return nil
		}},
		{"delete thread", func() error {
			if err := s.DeleteThread(ctx, "big"); err != nil {
				return err
			}
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "big"}); !errors.Is(err, checkpoint.ErrNotFound) {
				return fmt.Errorf("GetTuple after delete: %v", err)
			}
			keys, err := rdb.Keys(ctx, s.Layout().ThreadBase("big")+":g:*").Result()
			if err != nil || len(keys) != 0 {
				return fmt.Errorf("keys left: %d %v", len(keys), err)
			}
			if n := rdb.ZCard(ctx, s.Layout().All(s.Layout().Shard("big"))).Val(); n != 0 {
				return fmt.Errorf("%d shard index entries left", n)
			}
			return nil
		}},
	}
	for _, op := range ops {
		stop := pingLoop(t, addr)
		began := time.Now()
		err := op.run()
		took := time.Since(began)
		ping := stop()
		slow, what := slowest(t, rdb)
		t.Logf("%s: %v; worst PING %v; worst SLOWLOG entry %v %s", op.name, took, ping, slow, what)
		if err != nil {
			t.Errorf("%s: %v", op.name, err)
		}
		if ping > blockLimit || slow > blockLimit {
			t.Errorf("%s blocked Redis: worst PING %v, worst SLOWLOG entry %v (%s); limit %v", op.name, ping, slow, what, blockLimit)
		}
	}
}
