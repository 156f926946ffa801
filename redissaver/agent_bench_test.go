package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// agentShapedThread writes steps checkpoints shaped like the bench harness's agent
// workload (bench/workload.go): a message list that grows by one 200-byte
// message per step, and 9 channels of about 280 bytes, one of which changes
// per step; each step's two tasks store 3 pending writes each. It returns
// the checkpoint IDs, oldest first.
func agentShapedThread(b *testing.B, s *redissaver.Saver, thread string, steps int) []string {
	b.Helper()
	ctx := context.Background()
	chans := []string{"messages", "plan", "scratchpad", "tool_results", "user_profile", "retrieval", "summary", "route", "config", "step_info"}
	text := func(seed int) string { return strings.Repeat(fmt.Sprintf("w%d ", seed%97), 256)[:200] }
	msgs := []any{}
	values := map[string]any{}
	versions := map[string]string{}
	cfg := checkpoint.Config{ThreadID: thread}
	ids := make([]string, 0, steps)
	for st := range steps {
		msgs = append(msgs[:len(msgs):len(msgs)], map[string]any{"type": "ai", "id": fmt.Sprintf("msg-%06d", st), "content": text(st)})
		changed := map[string]string{"messages": fmt.Sprintf("%012d.5eed", st+1)}
		values["messages"] = msgs
		k := 1 + st%9
		for j := 1; j < len(chans); j++ {
			if st == 0 || j == k {
				values[chans[j]] = map[string]any{"channel": chans[j], "rev": int64(st), "data": text(st + j)}
				changed[chans[j]] = fmt.Sprintf("%012d.5eed", st+1)
			}
		}
		for c, v := range changed {
			versions[c] = v
		}
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "2026-11-24T00:00:00Z",
			ChannelValues: values, ChannelVersions: versions,
			VersionsSeen: map[string]map[string]string{"agent": {"messages": versions["messages"]}}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"source": "loop", "step": st}, changed); err != nil {
			b.Fatal(err)
		}
		for t, task := range []string{"task-agent", "task-tools"} {
			w := []checkpoint.Write{{Channel: "messages", Value: map[string]any{"type": "ai", "content": text(t)}},
				{Channel: "route", Value: "tools"}, {Channel: "step_info", Value: int64(st)}}
			if err := s.PutWrites(ctx, cfg, w, task, ""); err != nil {
				b.Fatal(err)
			}
		}
		ids = append(ids, cfg.CheckpointID)
	}
	return ids
}

// BenchmarkAgentReads reads an agent-shaped thread of 100 steps (about 28 KB
// of values in its latest checkpoint): the latest checkpoint, one by id, and
// the newest page of 10.
func BenchmarkAgentReads(b *testing.B) {
	s, ctr := benchSaver(b)
	ids := agentShapedThread(b, s, "bench-agent", 100)
	ctx := context.Background()
	b.Run("latest", func(b *testing.B) {
		ctr.Reset()
		b.ReportAllocs()
		for range b.N {
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "bench-agent"}); err != nil {
				b.Fatal(err)
			}
		}
		ctr.Report(b)
	})
	b.Run("byid", func(b *testing.B) {
		ctr.Reset()
		b.ReportAllocs()
		for i := range b.N {
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "bench-agent", CheckpointID: ids[50+i%40]}); err != nil {
				b.Fatal(err)
			}
		}
		ctr.Report(b)
	})
	b.Run("page10", func(b *testing.B) {
		ns := ""
		ctr.Reset()
		b.ReportAllocs()
		for range b.N {
			for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "bench-agent", CheckpointNS: &ns, Limit: 10}) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		ctr.Report(b)
	})
}

// BenchmarkAgentPut writes agent-shaped checkpoints (agentShapedThread),
// starting a new thread every 100 steps; b.N counts checkpoints (its pending
// writes ride along uncounted).
func BenchmarkAgentPut(b *testing.B) {
	s, ctr := benchSaver(b)
	ctr.Reset()
	b.ReportAllocs()
	for i := 0; i < b.N; i += 100 {
		agentShapedThread(b, s, fmt.Sprintf("bench-agent-put-%d", i), min(100, b.N-i))
	}
	ctr.Report(b)
}
