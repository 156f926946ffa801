// Package agentloop is redcheck's end-to-end workload: an agent loop that
// drives a checkpointer the way a graph runtime does, so that what a
// checkpointer adds to a super-step can be measured. Both measures of it run
// this one loop: BenchmarkSuperStep (redissaver, testing.B) and the bench
// harness's end-to-end pass (go run ./bench).
//
// One invoke of a new thread reads the thread's latest checkpoint
// (GetTuple; a new thread has none), then runs [StepsPerInvoke] super-steps.
// Each super-step after the first stores the pending writes of its two
// tasks, "agent" and "tools" (PutWrites ×2, two writes each: a message and a
// route), then the step's checkpoint (Put) with the two channels that
// changed: "messages", a list whose state starts at 10 KB (a system message)
// and grows by a 1 KB message per step (to 30 KB), and "route", a small
// channel that changes at every step. The loop builds the state at every
// step as a runtime would (the new message, the channel maps, the
// checkpoint with a new ID); with no checkpointer it does only that, which
// is the baseline the checkpointer's cost is measured over.
package agentloop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
)

// StepsPerInvoke is the length of one invoke: a GetTuple of the latest
// checkpoint, then this many super-steps.
const StepsPerInvoke = 20

// Checkpointer is what the loop calls; *redissaver.Saver is one.
type Checkpointer interface {
	GetTuple(ctx context.Context, cfg checkpoint.Config) (*checkpoint.Tuple, error)
	PutWrites(ctx context.Context, cfg checkpoint.Config, writes []checkpoint.Write, taskID, taskPath string) error
	Put(ctx context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string) (checkpoint.Config, error)
}

// tasks are the two tasks of a super-step.
var tasks = [2]string{"agent", "tools"}

// Invoke runs one invoke of thread (a thread without checkpoints: the
// GetTuple finds none) on s. With s nil (an untyped nil, not a nil
// *redissaver.Saver) it runs the same loop with no checkpointer: every
// step's state is built and handed to a checkpointer that keeps nothing
// (GetTuple finds nothing, Put returns the config of the new checkpoint).
// When next is not nil it is called before each super-step, and the invoke
// stops when it returns false (a benchmark handing out a fixed number of
// super-steps). Invoke returns the number of super-steps it ran.
func Invoke(ctx context.Context, s Checkpointer, thread string, next func() bool) (int, error) {
	if s == nil {
		s = none{}
	}
	cfg := checkpoint.Config{ThreadID: thread}
	if _, err := s.GetTuple(ctx, cfg); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return 0, err
	}
	base := strings.Repeat("x", 10_000)
	msgs := []any{map[string]any{"role": "system", "content": base}}
	versions := map[string]string{}
	for step := range StepsPerInvoke {
		if next != nil && !next() {
			return step, nil
		}
		if step > 0 {
			for t, task := range tasks {
				w := []checkpoint.Write{{Channel: "messages", Value: map[string]any{"role": "ai", "n": step, "t": t}},
					{Channel: "route", Value: task}}
				if err := s.PutWrites(ctx, cfg, w, fmt.Sprintf("task-%d-%s", step, task), ""); err != nil {
					return step, err
				}
			}
		}
		msgs = append(msgs[:len(msgs):len(msgs)], map[string]any{"role": "ai", "content": strings.Repeat("m", 1000)})
		ver := checkpoint.NextVersion(versions["messages"])
		changed := map[string]string{"messages": ver, "route": ver}
		versions["messages"], versions["route"] = ver, ver
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "2026-11-28T00:00:00Z",
			ChannelValues:   map[string]any{"messages": msgs, "route": fmt.Sprintf("step-%d", step)},
			ChannelVersions: map[string]string{"messages": ver, "route": ver},
			VersionsSeen:    map[string]map[string]string{"agent": {"messages": ver}}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"source": "loop", "step": step}, changed); err != nil {
			return step, err
		}
	}
	return StepsPerInvoke, nil
}

// none is the loop's checkpointer when it has none: it keeps nothing.
// Called through the interface like a real one, it receives the same
// values, built (and allocated) the same way.
type none struct{}

func (none) GetTuple(context.Context, checkpoint.Config) (*checkpoint.Tuple, error) {
	return nil, checkpoint.ErrNotFound
}

func (none) PutWrites(context.Context, checkpoint.Config, []checkpoint.Write, string, string) error {
	return nil
}

func (none) Put(_ context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, _ checkpoint.Metadata, _ map[string]string) (checkpoint.Config, error) {
	return cfg.WithID(cp.ID), nil
}
