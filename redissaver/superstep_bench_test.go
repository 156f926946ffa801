package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// superStepsPerInvoke is the length of one agent run: a GetTuple of the
// latest checkpoint, then this many super-steps.
const superStepsPerInvoke = 20

// BenchmarkSuperStep is the end-to-end measure of what the checkpointer adds
// to an agent loop, as a graph runtime calls it: each invoke of a thread
// reads its latest checkpoint, then runs 20 super-steps, each the pending
// writes of its two tasks (PutWrites, two writes each) and the checkpoint
// of the step (Put). The state starts at 10 KB and grows by 1 KB of
// messages per step (to 30 KB); a small channel changes at every step.
// b.N counts super-steps; threads are new for every invoke. Sub-benchmarks
// run 1 and 64 concurrent agents. It reports server-cpu-µs/op (Redis
// main-thread CPU per super-step) and roundtrips/op beside ns/op.
func BenchmarkSuperStep(b *testing.B) {
	for _, agents := range []int{1, 64} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			s, meter := benchSaver(b)
			var next atomic.Int64 // super-steps handed out
			var thread atomic.Int64
			ctx := context.Background()
			meter.Reset()
			b.ResetTimer()
			var wg sync.WaitGroup
			errs := make(chan error, agents)
			for range agents {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Load() < int64(b.N) {
						id := fmt.Sprintf("superstep-%d", thread.Add(1))
						if err := agentInvoke(ctx, s, id, &next, int64(b.N)); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			meter.Report(b)
		})
	}
}

// agentInvoke runs one invoke of thread: GetTuple latest, then up to 20
// super-steps while next stays below limit.
func agentInvoke(ctx context.Context, s *redissaver.Saver, thread string, next *atomic.Int64, limit int64) error {
	cfg := checkpoint.Config{ThreadID: thread}
	if _, err := s.GetTuple(ctx, cfg); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return err
	}
	base := strings.Repeat("x", 10_000)
	msgs := []any{map[string]any{"role": "system", "content": base}}
	versions := map[string]string{}
	for step := range superStepsPerInvoke {
		if next.Add(1) > limit {
			return nil
		}
		if step > 0 {
			for t, task := range []string{"agent", "tools"} {
				w := []checkpoint.Write{{Channel: "messages", Value: map[string]any{"role": "ai", "n": step, "t": t}},
					{Channel: "route", Value: task}}
				if err := s.PutWrites(ctx, cfg, w, fmt.Sprintf("task-%d-%s", step, task), ""); err != nil {
					return err
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
			return err
		}
	}
	return nil
}
