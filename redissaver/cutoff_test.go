package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// errCut is what the cutter returns instead of sending a command.
var errCut = errors.New("cut off")

// cutter is a go-redis hook that lets a number of commands (or pipelines)
// through, then fails every one without sending it: a client that dies, or
// a deadline that passes, between two steps of an operation.
type cutter struct {
	left  atomic.Int64 // commands still let through; negative: no limit
	armed atomic.Bool
}

func (c *cutter) pass() bool {
	if !c.armed.Load() {
		return true
	}
	return c.left.Add(-1) >= 0
}

func (c *cutter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (c *cutter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !c.pass() {
			cmd.SetErr(errCut)
			return errCut
		}
		return next(ctx, cmd)
	}
}

func (c *cutter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !c.pass() {
			for _, cmd := range cmds {
				cmd.SetErr(errCut)
			}
			return errCut
		}
		return next(ctx, cmds)
	}
}

// TestCutOffAfterEveryStep stops each multi-step operation after every one
// of its steps in turn, on a thread big enough to need several steps. After
// each cut, readers see a sound state (Verify finds no violation; GetTuple,
// List and DeltaChannelHistory answer without ErrDataLoss, and the latest
// checkpoint is either the one written last or, for deletions, gone), and
// running the operation again (or Sweep) finishes it.
func TestCutOffAfterEveryStep(t *testing.T) {
	const n = 300 // more than one step of every budget
	ops := []struct {
		name string
		run  func(ctx context.Context, s *redissaver.Saver) error
		// gone: the thread no longer has checkpoints once the operation is
		// done; kept: checkpoints left in thread "t" once done.
		gone bool
		kept int
		// partial: a cut may leave any subset of the run's checkpoints, so
		// the latest may be an older one (the newer ones were deleted).
		partial bool
	}{
		{"delete thread", func(ctx context.Context, s *redissaver.Saver) error { return s.DeleteThread(ctx, "t") }, true, 0, false},
		{"delete for runs", func(ctx context.Context, s *redissaver.Saver) error { return s.DeleteForRuns(ctx, []string{"run-t"}) }, true, 0, true},
		{"prune keep_latest", func(ctx context.Context, s *redissaver.Saver) error {
			return s.Prune(ctx, []string{"t"}, checkpoint.PruneKeepLatest)
		}, false, 1, false},
		{"copy thread", func(ctx context.Context, s *redissaver.Saver) error { return s.CopyThread(ctx, "t", "copy") }, false, n, false},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			rdb := redistest.Real(t)
			cut := &cutter{}
			rdb.AddHook(cut)
			ctx := context.Background()
			for k := 0; ; k++ {
				s := newSaver(t, rdb, redissaver.Options{})
				last := scaleChain(t, s, "t", n)
				if err := s.LoadScripts(ctx); err != nil {
					t.Fatal(err)
				}
				cut.left.Store(int64(k))
				cut.armed.Store(true)
				err := op.run(ctx, s)
				cut.armed.Store(false)
				if err == nil {
					if k < 2 {
						t.Fatalf("finished after %d steps: the thread is too small to test cutting", k)
					}
					t.Logf("%d steps; cut after each of them", k)
					return
				}
				if !errors.Is(err, errCut) {
					t.Fatalf("cut after %d steps: %v", k, err)
				}
				// Readers see a sound state.
				checkSound(t, s, fmt.Sprint("cut after ", k, " steps"), last, op.partial)
				// Running it again finishes it.
				if err := op.run(ctx, s); err != nil {
					t.Fatalf("cut after %d steps, then again: %v", k, err)
				}
				if _, err := s.Sweep(ctx); err != nil {
					t.Fatal(err)
				}
				checkSound(t, s, fmt.Sprint("cut after ", k, " steps, then done"), last, op.partial)
				th := "t"
				if op.name == "copy thread" {
					th = "copy"
				}
				if got := count(t, s, th); got != op.kept {
					t.Errorf("cut after %d steps, then done: %d checkpoints in %s, want %d", k, got, th, op.kept)
				}
			}
		})
	}
}

// checkSound fails on any violation or data loss a reader could meet.
func checkSound(t *testing.T, s *redissaver.Saver, when string, last checkpoint.Config, partial bool) {
	t.Helper()
	ctx := context.Background()
	res, err := s.Verify(ctx, "")
	if err != nil {
		t.Fatalf("%s: verify: %v", when, err)
	}
	for _, v := range res.Violations {
		t.Errorf("%s: %v", when, v)
	}
	for _, th := range []string{"t", "copy"} {
		tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th})
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
		case err != nil:
			t.Errorf("%s: GetTuple %s: %v", when, th, err)
		case partial && tup.Checkpoint.ID <= last.CheckpointID:
		case tup.Checkpoint.ID != last.CheckpointID:
			t.Errorf("%s: latest of %s is %s, want %s", when, th, tup.Checkpoint.ID, last.CheckpointID)
		}
		for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th}) {
			if err != nil {
				t.Errorf("%s: List %s: %v", when, th, err)
				break
			}
		}
		if _, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: th}, []string{"log"}); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("%s: delta history of %s: %v", when, th, err)
		}
	}
}
