package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

// Benchmarks run on a real Redis only (never on miniredis); each reports
// the round trips it made per operation, and the raw EVALSHA of a trivial
// script on the same server as the floor to compare with.

func benchSaver(b *testing.B, opts ...redissaver.Options) (*redissaver.Saver, *redistest.BenchMeter) {
	b.Helper()
	rdb := redistest.Real(b)
	ctr := redistest.NewBenchMeter(rdb)
	var o redissaver.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Prefix = redistest.Prefix(b)
	o.AcceptEviction = true
	s, err := redissaver.New(context.Background(), rdb, o)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.LoadScripts(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx := context.Background()
		for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
			if err != nil {
				return
			}
			_ = s.DeleteThread(ctx, tup.Config.ThreadID)
		}
	})
	return s, ctr
}

// BenchmarkEvalShaFloor is the floor: EVALSHA of a script that returns 1.
// Its sub-benchmarks pass one unused argument of growing size, which shows
// what every byte that enters a script costs the server: Redis 7's Lua
// hashes the whole of each string it creates (luaS_newlstr), about 1.3 ns
// per byte, so a 12 KB value costs some 16 µs of server time before the
// script has done anything with it.
func BenchmarkEvalShaFloor(b *testing.B) {
	for _, size := range []int{0, 1 << 10, 12 << 10} {
		b.Run(fmt.Sprintf("arg=%dB", size), func(b *testing.B) {
			rdb := redistest.Real(b)
			ctr := redistest.NewBenchMeter(rdb)
			ctx := context.Background()
			sha, err := rdb.ScriptLoad(ctx, "return 1").Result()
			if err != nil {
				b.Fatal(err)
			}
			arg := strings.Repeat("a", size)
			ctr.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := rdb.EvalSha(ctx, sha, []string{"k"}, arg).Err(); err != nil {
					b.Fatal(err)
				}
			}
			ctr.Report(b)
		})
	}
}

// BenchmarkPut writes agent-like checkpoints (2 of 3 channels changed, a
// message list of about 40 entries), with event publishing on and off.
func BenchmarkPut(b *testing.B) {
	for _, events := range []bool{true, false} {
		b.Run(fmt.Sprintf("events=%v", events), func(b *testing.B) {
			s, ctr := benchSaver(b, redissaver.Options{AcceptEviction: true, Events: redissaver.Events{Disabled: !events}})
			ctx := context.Background()
			cfg := checkpoint.Config{ThreadID: "bench-put"}
			msgs := make([]any, 0, 64)
			version := ""
			ctr.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				version = s.NextVersion(version)
				msgs = append(msgs[:min(len(msgs), 40)], map[string]any{"role": "ai", "content": "hello there, how can I help?"})
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "2026-11-22T11:00:00Z",
					ChannelValues:   map[string]any{"messages": msgs, "step": 1},
					ChannelVersions: map[string]string{"messages": version, "step": version, "config": "1"}}
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"source": "loop", "step": 1}, map[string]string{"messages": version, "step": version}); err != nil {
					b.Fatal(err)
				}
			}
			ctr.Report(b)
		})
	}
}

func BenchmarkPutWrites(b *testing.B) {
	s, ctr := benchSaver(b)
	ctx := context.Background()
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "bench-writes"}, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	writes := []checkpoint.Write{{Channel: "messages", Value: "a"}, {Channel: "step", Value: 2}, {Channel: "x", Value: true}}
	ctr.Reset()
	b.ReportAllocs()
	i := 0
	b.ResetTimer()
	for range b.N {
		i++
		if err := s.PutWrites(ctx, cfg, writes, fmt.Sprint("task-", i), ""); err != nil {
			b.Fatal(err)
		}
	}
	ctr.Report(b)
}

// history writes n checkpoints of an agent-like thread for the read
// benchmarks.
func history(b *testing.B, s *redissaver.Saver, thread string, n int) []string {
	b.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: thread}
	ids := make([]string, 0, n)
	version := ""
	for i := range n {
		version = s.NextVersion(version)
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
			ChannelValues:   map[string]any{"messages": []any{fmt.Sprint("message ", i)}},
			ChannelVersions: map[string]string{"messages": version}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, cp.ChannelVersions); err != nil {
			b.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "a", Value: i}}, "task", ""); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, cfg.CheckpointID)
	}
	return ids
}

func BenchmarkGetTuple(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("latest/history=%d", n), func(b *testing.B) {
			s, ctr := benchSaver(b)
			history(b, s, "bench-get", n)
			ctx := context.Background()
			ctr.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "bench-get"}); err != nil {
					b.Fatal(err)
				}
			}
			ctr.Report(b)
		})
		b.Run(fmt.Sprintf("byid/history=%d", n), func(b *testing.B) {
			s, ctr := benchSaver(b)
			ids := history(b, s, "bench-get", n)
			ctx := context.Background()
			ctr.Reset()
			b.ReportAllocs()
			i := 0
			b.ResetTimer()
			for range b.N {
				i++
				if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "bench-get", CheckpointID: ids[i%len(ids)]}); err != nil {
					b.Fatal(err)
				}
			}
			ctr.Report(b)
		})
	}
}

func BenchmarkList(b *testing.B) {
	for _, limit := range []int{10, 100} {
		b.Run(fmt.Sprintf("page=%d", limit), func(b *testing.B) {
			s, ctr := benchSaver(b)
			history(b, s, "bench-list", 200)
			ctx := context.Background()
			ns := ""
			ctr.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "bench-list", CheckpointNS: &ns, Limit: limit}) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			ctr.Report(b)
		})
	}
}

// BenchmarkDeltaHistory compares the one-script walk over 1,000 ancestors
// with the same result built by a GetTuple per ancestor.
func BenchmarkDeltaHistory(b *testing.B) {
	s, ctr := benchSaver(b)
	head := deltaChain(b, s, "bench-delta", 1000)
	ctx := context.Background()
	b.Run("script", func(b *testing.B) {
		ctr.Reset()
		b.ResetTimer()
		for range b.N {
			h, err := s.DeltaChannelHistory(ctx, head, []string{"log"})
			if err != nil || len(h["log"].Writes) != 999 {
				b.Fatal(err, len(h["log"].Writes))
			}
		}
		ctr.Report(b)
	})
	b.Run("gettuple-walk", func(b *testing.B) {
		ctr.Reset()
		b.ResetTimer()
		for range b.N {
			if n := walkHistory(b, s, head, "log"); n != 999 {
				b.Fatal(n)
			}
		}
		ctr.Report(b)
	})
}

// walkHistory is what a saver without DeltaHistorian makes a caller do:
// read each ancestor with GetTuple until one holds the channel.
func walkHistory(b *testing.B, s *redissaver.Saver, head checkpoint.Config, ch string) int {
	ctx := context.Background()
	tup, err := s.GetTuple(ctx, head)
	if err != nil {
		b.Fatal(err)
	}
	var writes []checkpoint.PendingWrite
	for cur := tup.ParentConfig; cur != nil; {
		t, err := s.GetTuple(ctx, *cur)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range t.PendingWrites {
			if w.Channel == ch {
				writes = append(writes, w)
			}
		}
		if _, ok := t.Checkpoint.ChannelValues[ch]; ok {
			break
		}
		cur = t.ParentConfig
	}
	return len(writes)
}
