package redissaver_test

import (
	"context"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
	"strconv"
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

// BenchmarkPutWritesFloor measures, in one run, what an agent-shaped Put
// costs against two floors: "set" is SET of about the bytes the Put sends
// (14 KB), and "plain-writes" is what format 2 makes a Put write, sent as
// plain commands in one MULTI/EXEC with no script and no check: the values
// (12 KB and 280 B), a checkpoint hash of 18 fields, the 3 index entries and
// the 2 events. "put" is redcheck's Put of the same shape (2 of 10 channels
// changed, no pending writes). The plain writes are the least any Put of
// this format can cost.
func BenchmarkPutWritesFloor(b *testing.B) {
	s, ctr := benchSaver(b)
	rdb := redistest.Real(b)
	ctx := context.Background()
	big, small := strings.Repeat("x", 12000), strings.Repeat("y", 280)
	fields := []any{}
	for i := range 18 {
		fields = append(fields, fmt.Sprintf("c:channel%d", i), "000000000001.5eed\x00abcdefghijklm")
	}
	event := []any{"t", "checkpoint", "th", "thread", "ns", "", "id", "01M86AW2JTGREM6KER4Q23TWH3", "ch", "8:messages4:plan"}
	base := keys.Of(s).Prefix() + ":{1}:floor:"
	b.Run("set", func(b *testing.B) {
		v := strings.Repeat("x", 14300)
		ctr.Reset()
		for i := range b.N {
			if err := rdb.Set(ctx, base+"set:"+strconv.Itoa(i%100), v, 0).Err(); err != nil {
				b.Fatal(err)
			}
		}
		ctr.Report(b)
	})
	b.Run("plain-writes", func(b *testing.B) {
		ctr.Reset()
		for i := range b.N {
			id := fmt.Sprintf("%026d", i)
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, base+"blobs", "8:messages"+id, big, "4:plan"+id, small)
				p.HSet(ctx, base+"cp:"+id, fields...)
				p.ZAdd(ctx, base+"idx", redis.Z{Member: id})
				p.ZAdd(ctx, base+"tidx", redis.Z{Member: id + "\x00"})
				p.ZAdd(ctx, base+"all", redis.Z{Member: id + "\x00thread\x00\x00gen"})
				p.XAdd(ctx, &redis.XAddArgs{Stream: base + "events", MaxLen: 10000, Approx: true, Values: event})
				p.XAdd(ctx, &redis.XAddArgs{Stream: base + "feed", MaxLen: 100000, Approx: true, Values: event})
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		ctr.Report(b)
	})
	b.Run("put", func(b *testing.B) {
		msgs := make([]any, 48)
		for j := range msgs {
			msgs[j] = map[string]any{"type": "ai", "id": fmt.Sprintf("msg-%06d", j), "content": big[:200]}
		}
		values := map[string]any{"messages": msgs}
		versions := map[string]string{}
		for j := range 10 {
			ch := fmt.Sprintf("channel%d", j)
			if j > 0 {
				values[ch] = map[string]any{"data": small}
			}
			versions[ch] = "000000000001.5eed"
		}
		cfg := checkpoint.Config{ThreadID: "bench-floor"}
		ctr.Reset()
		for i := range b.N {
			ver := fmt.Sprintf("%012d.5eed", i+2)
			versions["channel0"], versions["channel1"] = ver, ver
			values["channel0"] = msgs
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "2026-11-24T00:00:00Z", ChannelValues: values, ChannelVersions: versions}
			var err error
			if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, map[string]string{"channel0": ver, "channel1": ver}); err != nil {
				b.Fatal(err)
			}
		}
		ctr.Report(b)
	})
}
