package redissaver_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// TestRestartedEmpty: Redis restarts without persistence while a saver and
// a consumer group run. The saver's first call after it answers
// ErrPrefixReset (an ErrDataLoss), having created the prefix again and
// published a prefix_reset event on every feed; the calls after it work
// without restarting the process: a new thread is written and read, a
// thread written before reads as not found, and the consumer group, made
// anew by Consume, handles the reset event and the new thread's events.
func TestRestartedEmpty(t *testing.T) {
	srv := redistest.StartRestartableServer(t, "--appendonly", "no")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "rs", Shards: 2})
	must(t, err)
	chain(t, s, "before", 3)

	sub, err := stream.New(rdb, stream.Options{Prefix: "rs", Shards: 2, Block: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	must(t, err)
	var mu sync.Mutex
	seen := map[string]int{}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sub.Consume(cctx, "g", "c1", func(_ context.Context, ev stream.Event) error {
			mu.Lock()
			defer mu.Unlock()
			seen[string(ev.Type)+" "+ev.ThreadID]++
			return nil
		}, stream.ConsumeOptions{Start: stream.FromBeginning})
	}()
	defer func() { cancel(); <-done }()
	waitFor := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			n := seen[what]
			mu.Unlock()
			if n > 0 {
				return
			}
		}
		t.Fatalf("the consumer group never handled %q (saw %v)", what, seen)
	}
	waitFor("checkpoint before")

	srv.Kill()
	must(t, srv.Restart())

	_, err = s.Put(ctx, checkpoint.Config{ThreadID: "after"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
	if !errors.Is(err, redissaver.ErrPrefixReset) || !errors.Is(err, checkpoint.ErrDataLoss) {
		t.Fatalf("first Put after the restart: %v, want ErrPrefixReset and ErrDataLoss", err)
	}
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "after"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
	if err != nil {
		t.Fatalf("Put once told: %v", err)
	}
	if tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "after"}); err != nil || tup.Config.CheckpointID != cfg.CheckpointID {
		t.Fatalf("GetTuple of the new thread: %v, %v", tup, err)
	}
	if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "before"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("GetTuple of a thread written before: %v, want ErrNotFound", err)
	}
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "after"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil); err != nil {
		t.Errorf("a later Put: %v", err)
	}
	waitFor("prefix_reset ")
	waitFor("checkpoint after")
	// A second saver on the same prefix (a restarted process) finds it whole.
	if _, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "rs", Shards: 2}); err != nil {
		t.Errorf("New after the reset: %v", err)
	}
}

// TestRestartedEmptyWithEviction: a saver that accepts eviction
// (AcceptEviction) does not take a prefix that looks empty for a reset:
// keys evicted one by one can leave it so while threads' data remain. Its
// calls answer ErrDataLoss until the operator's Reinitialize, which
// recreates the prefix; then writes work.
func TestRestartedEmptyWithEviction(t *testing.T) {
	srv := redistest.StartRestartableServer(t, "--appendonly", "no")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "rs", Shards: 2, AcceptEviction: true})
	must(t, err)
	chain(t, s, "before", 2)
	if did, err := s.Reinitialize(ctx); did || err != nil {
		t.Fatalf("Reinitialize of a whole prefix: %v, %v; want false, nil", did, err)
	}
	srv.Kill()
	must(t, srv.Restart())
	for range 2 {
		_, err := s.Put(ctx, checkpoint.Config{ThreadID: "after"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
		if !errors.Is(err, checkpoint.ErrDataLoss) || errors.Is(err, redissaver.ErrPrefixReset) {
			t.Fatalf("Put after the restart: %v, want ErrDataLoss (no reset)", err)
		}
	}
	if did, err := s.Reinitialize(ctx); !did || err != nil {
		t.Fatalf("Reinitialize: %v, %v; want true, nil", did, err)
	}
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "after"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil); err != nil {
		t.Fatalf("Put after Reinitialize: %v", err)
	}
}
