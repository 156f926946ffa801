package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// wideCheckpoint is a checkpoint with several channels, metadata and a
// parent, so that a partial write would show.
func wideCheckpoint(i int) (checkpoint.Checkpoint, checkpoint.Metadata, map[string]string) {
	v := fmt.Sprint(i + 1)
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
		ChannelValues:   map[string]any{"a": i, "b": fmt.Sprint("b", i), "c": []any{i, i}},
		ChannelVersions: map[string]string{"a": v, "b": v, "c": v}}
	return cp, checkpoint.Metadata{"step": i, "source": "loop"}, cp.ChannelVersions
}

// requireWholeOrAbsent reads cfg back: either it is there whole (every
// channel, the metadata, nWrites writes) or it is not there at all.
func requireWholeOrAbsent(t *testing.T, s *redissaver.Saver, cfg checkpoint.Config, i, nWrites int) (present bool) {
	t.Helper()
	tup, err := s.GetTuple(context.Background(), cfg)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("GetTuple(%v): %v", cfg, err)
	}
	if len(tup.Checkpoint.ChannelValues) != 3 || fmt.Sprint(tup.Checkpoint.ChannelValues["b"]) != fmt.Sprint("b", i) ||
		fmt.Sprint(tup.Metadata["step"]) != fmt.Sprint(i) || tup.Metadata["source"] != "loop" {
		t.Errorf("checkpoint %v half-written: values %v, metadata %v", cfg, tup.Checkpoint.ChannelValues, tup.Metadata)
	}
	if nWrites >= 0 && len(tup.PendingWrites) != nWrites {
		t.Errorf("checkpoint %v: %d writes, want %d: %v", cfg, len(tup.PendingWrites), nWrites, tup.PendingWrites)
	}
	return true
}

// TestRestartBetweenCalls: Redis restarts (SIGKILL, then started again on
// its data) between two calls of one saver and one client. The next call
// succeeds: go-redis dials again. While Redis is down, calls fail promptly
// with a clear error.
func TestRestartBetweenCalls(t *testing.T) {
	srv := redistest.StartRestartableServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "restart"}
	var stored []checkpoint.Config
	for i := range 3 {
		cp, md, nv := wideCheckpoint(i)
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, md, nv); err != nil {
			t.Fatalf("Put %d after %d restarts: %v", i, srv.Restarts(), err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: i}}, "task", ""); err != nil {
			t.Fatalf("PutWrites %d after %d restarts: %v", i, srv.Restarts(), err)
		}
		stored = append(stored, cfg)
		srv.Kill()
		if i == 1 {
			// Down: a clear error, within go-redis's retries (about a second).
			start := time.Now()
			_, err := s.GetTuple(ctx, cfg)
			if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.HasPrefix(err.Error(), "redissaver: get tuple: ") {
				t.Errorf("GetTuple with Redis down: %v, want redissaver: get tuple: ... connection refused", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("GetTuple with Redis down took %v", d)
			}
		}
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range stored {
		if !requireWholeOrAbsent(t, s, c, i, 1) {
			t.Errorf("checkpoint %d lost across restarts", i)
		}
	}
	requireSound(t, s, "")
}

// TestScriptFlush: after SCRIPT FLUSH every operation runs again at once,
// single calls (EVALSHA falls back to EVAL) and pipelined ones (which load
// the script and run again) alike.
func TestScriptFlush(t *testing.T) {
	_, mini := redistest.Mini(t)
	dedicated := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t)}) // SCRIPT FLUSH is server-wide
	t.Cleanup(func() { _ = dedicated.Close() })
	clients := map[string]redis.UniversalClient{"miniredis": mini, "redis": dedicated}
	for name, rdb := range clients {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSaver(t, rdb, redissaver.Options{Shards: 4})
			if err := s.LoadScripts(ctx); err != nil {
				t.Fatal(err)
			}
			flushed := 0
			step := func(what string, f func() error) {
				t.Helper()
				if err := rdb.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				flushed++
				if err := f(); err != nil {
					t.Fatalf("%s after SCRIPT FLUSH: %v", what, err)
				}
			}
			var cfg checkpoint.Config
			for _, th := range []string{"a", "b", "c"} {
				cfg = checkpoint.Config{ThreadID: th}
				for i := range 2 {
					cp, md, nv := wideCheckpoint(i)
					md["run_id"] = "run-" + th
					step("Put", func() (err error) { cfg, err = s.Put(ctx, cfg, cp, md, nv); return err })
					step("PutWrites", func() error {
						return s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: i}}, "task", "")
					})
				}
			}
			step("GetTuple", func() error { _, err := s.GetTuple(ctx, cfg); return err })
			step("List one thread", func() error { return drain(s.List(ctx, checkpoint.ListQuery{ThreadID: "a"})) })
			step("List every thread", func() error { return drain(s.List(ctx, checkpoint.ListQuery{})) })
			step("DeltaChannelHistory", func() error { _, err := s.DeltaChannelHistory(ctx, cfg, []string{"w"}); return err })
			step("CopyThread", func() error { return s.CopyThread(ctx, "a", "a2") })
			step("Check", func() error { _, err := violations(ctx, s, ""); return err })
			step("Prune", func() error { return s.Prune(ctx, []string{"a", "a2"}, checkpoint.PruneKeepLatest) })
			step("DeleteForRuns", func() error { return s.DeleteForRuns(ctx, []string{"run-b"}) })
			step("DeleteThread", func() error { return s.DeleteThread(ctx, "c") })
			res := requireSound(t, s, "")
			if res.Checkpoints != 2 {
				t.Errorf("%d checkpoints left, want 2 (latest of a and of a2)", res.Checkpoints)
			}
			t.Logf("%d operations, each right after a SCRIPT FLUSH", flushed)
		})
	}
}

func drain(seq func(func(*checkpoint.Tuple, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// pauseAll makes the server hold every client's commands for d.
func pauseAll(t *testing.T, admin *redis.Client, d time.Duration) {
	t.Helper()
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", d.Milliseconds(), "ALL").Err(); err != nil {
		t.Fatal(err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestClientTimeout: with the server stalled (CLIENT PAUSE), a client with a
// short ReadTimeout gets a clear timeout error; the commands it sent still
// run when the server resumes, so the checkpoint ends up whole or absent,
// never half-written, and writing it again just works.
func TestClientTimeout(t *testing.T) {
	addr := redistest.StartServer(t)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = admin.Close() })
	// No retries, so the call's time is one read timeout however loaded
	// the machine is (go-redis retries timeouts by default).
	rdb := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	parent, err := s.Put(ctx, checkpoint.Config{ThreadID: "slow"}, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	const pause = 2 * time.Second
	pauseAll(t, admin, pause)
	cp, md, nv := wideCheckpoint(7)
	start := time.Now()
	_, err = s.Put(ctx, parent, cp, md, nv)
	took := time.Since(start)
	if err == nil || !isTimeout(err) || !strings.HasPrefix(err.Error(), "redissaver: put: ") {
		t.Fatalf("Put to a stalled server: %v, want a wrapped timeout", err)
	}
	if took > pause/2 {
		t.Errorf("Put to a stalled server returned after %v, not within its read timeout", took)
	}
	werr := s.PutWrites(ctx, parent.WithID(cp.ID), []checkpoint.Write{{Channel: "w", Value: 1}}, "task", "")
	if werr == nil || !strings.HasPrefix(werr.Error(), "redissaver: ") {
		t.Fatalf("PutWrites to a stalled server: %v, want a wrapped error", werr)
	}
	t.Logf("stalled server: Put failed after %v with %v; PutWrites with %v", took.Round(time.Millisecond), err, werr)

	// Once the server resumes, what was sent runs: whole or not at all.
	time.Sleep(pause + 100*time.Millisecond - time.Since(start))
	cfg := checkpoint.Config{ThreadID: "slow", CheckpointID: cp.ID}
	present := requireWholeOrAbsent(t, s, cfg, 7, -1)
	requireSound(t, s, "")
	if _, err := s.Put(ctx, parent, cp, md, nv); err != nil {
		t.Fatalf("Put again after the stall: %v", err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: 1}}, "task", ""); err != nil {
		t.Fatalf("PutWrites again after the stall: %v", err)
	}
	requireWholeOrAbsent(t, s, cfg, 7, 1)
	res := requireSound(t, s, "")
	if res.Checkpoints != 2 {
		t.Errorf("%d checkpoints, want 2 (no duplicate from retries)", res.Checkpoints)
	}
	t.Logf("the timed-out Put was applied by the server after all: %v", present)
}

// TestContextDeadline: a context that ends while the server is stalled
// ends the call at once (with ContextTimeoutEnabled, go-redis applies the
// context's deadline to the connection) with an error that says so;
// nothing is half-written. A context cancelled before the call writes
// nothing (see TestCancelledAndUnreachable).
func TestContextDeadline(t *testing.T) {
	addr := redistest.StartServer(t)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = admin.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{Shards: 2})
	ctx := context.Background()
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	parent, err := s.Put(ctx, checkpoint.Config{ThreadID: "ctx"}, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	const pause = 2 * time.Second
	pauseAll(t, admin, pause)
	cp, md, nv := wideCheckpoint(3)
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = s.Put(dctx, parent, cp, md, nv)
	cancel()
	took := time.Since(start)
	if err == nil || !(errors.Is(err, context.DeadlineExceeded) || isTimeout(err)) || !strings.HasPrefix(err.Error(), "redissaver: put: ") {
		t.Fatalf("Put past its deadline: %v, want a wrapped deadline error", err)
	}
	if took > pause/2 {
		t.Errorf("Put past its 100ms deadline returned after %v", took)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	var listErr error
	for _, err := range s.List(cctx, checkpoint.ListQuery{}) {
		listErr = err
	}
	if listErr == nil || !(errors.Is(listErr, context.Canceled) || isTimeout(listErr)) {
		t.Errorf("List cancelled mid-call: %v, want a wrapped cancellation", listErr)
	}
	t.Logf("Put past its deadline: %v after %v; List cancelled: %v", err, took.Round(time.Millisecond), listErr)

	time.Sleep(pause + 100*time.Millisecond - time.Since(start))
	requireWholeOrAbsent(t, s, checkpoint.Config{ThreadID: "ctx", CheckpointID: cp.ID}, 3, 0)
	requireSound(t, s, "")
}
