package main

import (
	"context"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

// BenchmarkAgentReads measures the reads of the bench on one thread of the
// agent workload (100 steps), on a real Redis (skipped without one), for
// -benchmem and -memprofile: the client side of a read is its decoding.
func BenchmarkAgentReads(b *testing.B) {
	ctx := context.Background()
	rdb := redistest.Real(b)
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: redistest.Prefix(b)})
	if err != nil {
		b.Fatal(err)
	}
	const thread = "agent-bench"
	ids, err := agentThread(ctx, s, thread, agentTable(100))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.DeleteThread(ctx, thread) })
	root := ""
	run := func(name string, op func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("GetTuple.latest", func() error {
		_, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: thread})
		return err
	})
	run("GetTuple.byid", func() error {
		_, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: thread, CheckpointID: ids[50]})
		return err
	})
	run("List.page10", func() error {
		for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: thread, CheckpointNS: &root, Before: ids[60], Limit: 10}) {
			if err != nil {
				return err
			}
		}
		return nil
	})
}
