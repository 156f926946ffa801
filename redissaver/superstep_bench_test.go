package redissaver_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/agentloop"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

// BenchmarkSuperStep is the end-to-end measure of what the checkpointer adds
// to an agent loop, as a graph runtime calls it: the loop of
// internal/agentloop, which the bench harness's end-to-end pass (go run
// ./bench) runs too. Each invoke of a thread reads its latest checkpoint,
// then runs 20 super-steps, each the pending writes of its two tasks
// (PutWrites, two writes each) and the checkpoint of the step (Put). The
// state starts at 10 KB and grows by 1 KB of messages per step (to 30 KB); a
// small channel changes at every step. b.N counts super-steps; threads are
// new for every invoke. Sub-benchmarks run 1 and 64 concurrent agents. It
// reports server-cpu-µs/op (Redis main-thread CPU per super-step) and
// roundtrips/op beside ns/op.
func BenchmarkSuperStep(b *testing.B) {
	for _, agents := range []int{1, 64} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			s, meter := benchSaver(b)
			runSuperSteps(b, s, meter, agents)
		})
	}
}

// BenchmarkSuperStepEncryption is BenchmarkSuperStep's loop with
// encryption at rest off and on (Options.Encryption, one AES-256 key), at 1
// and 64 agents: compare the pairs of one run (-count interleaves them).
func BenchmarkSuperStepEncryption(b *testing.B) {
	ring, err := checkpoint.NewKeyring("k1", map[string][]byte{"k1": make([]byte, checkpoint.KeySize)})
	if err != nil {
		b.Fatal(err)
	}
	for _, agents := range []int{1, 64} {
		for _, enc := range []struct {
			name string
			ring *checkpoint.Keyring
		}{{"off", nil}, {"on", ring}} {
			b.Run(fmt.Sprintf("agents=%d/encryption=%s", agents, enc.name), func(b *testing.B) {
				s, meter := benchSaver(b, redissaver.Options{Encryption: enc.ring})
				runSuperSteps(b, s, meter, agents)
			})
		}
	}
}

// runSuperSteps runs b.N super-steps of agentloop on s with agents
// concurrent agents, and reports the meter's figures.
func runSuperSteps(b *testing.B, s *redissaver.Saver, meter *redistest.BenchMeter, agents int) {
	var next atomic.Int64 // super-steps handed out
	var thread atomic.Int64
	ctx := context.Background()
	step := func() bool { return next.Add(1) <= int64(b.N) }
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
				if _, err := agentloop.Invoke(ctx, s, id, step); err != nil {
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
}
