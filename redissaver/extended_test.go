package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"reflect"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// footprint counts the keys of a prefix and the fields and members they
// hold, event streams aside.
func footprint(t *testing.T, rdb redis.UniversalClient, prefix string) (nkeys, nfields int) {
	t.Helper()
	ctx := context.Background()
	ks, err := rdb.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if k == prefix+":meta" {
			continue // the prefix's meta key, written by New
		}
		if strings.HasSuffix(k, "}:threads") && rdb.ZCard(ctx, k).Val() == 1 && rdb.ZScore(ctx, k, "").Err() == nil {
			continue // a shard registry holding only its marker, written by New
		}
		var n int64
		switch typ := rdb.Type(ctx, k).Val(); typ {
		case "hash":
			n = rdb.HLen(ctx, k).Val()
		case "zset":
			n = rdb.ZCard(ctx, k).Val()
		case "set":
			n = rdb.SCard(ctx, k).Val()
		case "stream":
			continue
		default:
			t.Fatalf("key %q of type %s", k, typ)
		}
		nkeys++
		nfields += int(n)
	}
	return nkeys, nfields
}

// agentThread writes n checkpoints where "messages" changes every step,
// "config" never, with two pending writes per step.
func agentThread(t *testing.T, s *redissaver.Saver, thread string, n int) checkpoint.Config {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: thread}
	versions := map[string]string{"config": "1"}
	for i := range n {
		versions["messages"] = s.NextVersion(versions["messages"])
		nv := map[string]string{"messages": versions["messages"]}
		if i == 0 {
			nv["config"] = "1"
		}
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
			ChannelValues:   map[string]any{"messages": []any{fmt.Sprint("message ", i)}, "config": "cfg"},
			ChannelVersions: map[string]string{"messages": versions["messages"], "config": "1"}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i, "run_id": fmt.Sprint("run-", i%5)}, nv); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "a", Value: i}, {Channel: "b", Value: i}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// TestPruneKeepsOnlyWhatIsNeeded: after keep_latest on a 500-checkpoint
// thread, Redis holds exactly what one checkpoint needs.
func TestPruneKeepsOnlyWhatIsNeeded(t *testing.T) {
	rdb := redistest.Real(t)
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	latest := agentThread(t, s, "long", 500)
	beforeKeys, beforeFields := footprint(t, rdb, keys.Of(s).Prefix())
	want, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "long"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{"long"}, checkpoint.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	afterKeys, afterFields := footprint(t, rdb, keys.Of(s).Prefix())
	t.Logf("before: %d keys, %d fields; after: %d keys, %d fields", beforeKeys, beforeFields, afterKeys, afterFields)
	// Left: the checkpoint hash (v, ts, p, s, 2 versions, 2 metadata, r, 2
	// writes = 11 fields), the namespace index (1), the blobs (2 values), the
	// namespaces set (1), the thread index (1), the shard registry (1), the
	// shard index (1) and the run set (1): 8 keys, 19 fields.
	// Add the thread's head (1 key, fields g and exp), the call token
	// fields "o" and "ow" of the checkpoint and the registry's marker
	// member: 9 keys, 24 fields; and the values hash's own field "#": 25.
	if afterKeys != 9 || afterFields != 25 {
		t.Errorf("after prune: %d keys, %d fields; want 9 and 25", afterKeys, afterFields)
	}
	got, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "long"})
	if err != nil || got.Checkpoint.ID != latest.CheckpointID {
		t.Fatalf("latest after prune: %v, %v", got, err)
	}
	if fmt.Sprint(got.Checkpoint.ChannelValues) != fmt.Sprint(want.Checkpoint.ChannelValues) || len(got.PendingWrites) != 2 {
		t.Errorf("pruned latest reads %v %v, want %v", got.Checkpoint.ChannelValues, got.PendingWrites, want.Checkpoint.ChannelValues)
	}
}

// TestPruneKeepsDeltaChain: keep_latest keeps the ancestors a delta channel
// needs to reach its seed, and nothing older.
func TestPruneKeepsDeltaChain(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "delta"}
	var ids []string
	for step := range 10 {
		ver := fmt.Sprint(step + 1)
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelVersions: map[string]string{"log": ver}, ChannelValues: map[string]any{}}
		nv := map[string]string{"log": ver}
		if step == 3 { // the seed
			cp.ChannelValues["log"] = checkpoint.DeltaSnapshot{Value: []any{"s0", "s1", "s2", "s3"}}
		}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, nil, nv); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cfg.CheckpointID)
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "log", Value: fmt.Sprint("w", step)}}, "t", ""); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.DeltaChannelHistory(ctx, cfg, []string{"log"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{"delta"}, checkpoint.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	after, err := s.DeltaChannelHistory(ctx, cfg, []string{"log"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(before) != fmt.Sprint(after) || !after["log"].HasSeed || len(after["log"].Writes) != 6 {
		t.Errorf("delta history changed by prune:\nbefore %v\nafter  %v", before, after)
	}
	var kept []string
	for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "delta"}) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, tup.Checkpoint.ID)
	}
	if len(kept) != 7 || kept[6] != ids[3] {
		t.Errorf("kept %d checkpoints (oldest %v), want the 7 from the seed at step 3 on", len(kept), kept)
	}
}

// TestDeleteForRunsCollectsValues: values only deleted checkpoints pointed
// to go; values a surviving checkpoint points to stay.
func TestDeleteForRunsCollectsValues(t *testing.T) {
	rdb := redistest.Real(t)
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	agentThread(t, s, "runs", 50) // run-0 … run-4, round robin
	_, fieldsBefore := footprint(t, rdb, keys.Of(s).Prefix())
	if err := s.DeleteForRuns(ctx, []string{"run-0", "run-1", "run-2", "run-3"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "runs"}) {
		if err != nil {
			t.Fatal(err)
		}
		if tup.Metadata["run_id"] != "run-4" || tup.Checkpoint.ChannelValues["config"] != "cfg" {
			t.Errorf("survivor %v reads %v", tup.Metadata, tup.Checkpoint.ChannelValues)
		}
		n++
	}
	if n != 10 {
		t.Errorf("%d checkpoints survive, want 10", n)
	}
	_, fieldsAfter := footprint(t, rdb, keys.Of(s).Prefix())
	// Each deleted checkpoint takes its hash fields and index entries, and the
	// messages value only it pointed to.
	if fieldsAfter >= fieldsBefore/4 {
		t.Errorf("fields: %d before, %d after deleting 4 of 5 runs", fieldsBefore, fieldsAfter)
	}
	if err := s.DeleteForRuns(ctx, []string{"run-4"}); err != nil {
		t.Fatal(err)
	}
	if k, f := footprint(t, rdb, keys.Of(s).Prefix()); k != 0 {
		t.Errorf("%d keys (%d fields) left after deleting every run", k, f)
	}
}

func TestCopyThreadOntoExisting(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{TTL: 0})
	ctx := context.Background()
	agentThread(t, s, "src", 3)
	agentThread(t, s, "dst", 1)
	if err := s.CopyThread(ctx, "src", "dst"); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("copy onto a thread with checkpoints: %v, want ErrInvalidConfig", err)
	}
	if err := s.CopyThread(ctx, "src", "src"); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("copy onto itself: %v", err)
	}
	n := 0
	for range s.List(ctx, checkpoint.ListQuery{ThreadID: "dst"}) {
		n++
	}
	if n != 1 {
		t.Errorf("a refused copy changed the target: %d checkpoints", n)
	}
	// The copy keeps its run index: deleting a run removes it from both.
	if err := s.CopyThread(ctx, "src", "copy"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteForRuns(ctx, []string{"run-0"}); err != nil {
		t.Fatal(err)
	}
	for _, th := range []string{"src", "copy"} {
		for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th}) {
			if err != nil || tup.Metadata["run_id"] == "run-0" {
				t.Errorf("%s still holds run-0: %v %v", th, tup, err)
			}
		}
	}
}

// TestDeltaHistoryLongChain: 1,000 small ancestors in one round trip (one
// bounded step of up to 1,000 ancestors); ancestors with many pending
// writes end a step once it has collected 4,000 writes, so that 150
// ancestors of 201 writes each take eight steps (20 ancestors each), and
// large writes once it holds 2 MiB of them. Either way the history comes
// out whole, oldest write first.
func TestDeltaHistoryLongChain(t *testing.T) {
	rdb := redistest.Real(t)
	ctr := redistest.CountRoundTrips(rdb)
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	small := deltaChain(t, s, "chain", 1000)
	fat := deltaChain(t, s, "fat", 151, 200)
	// 11 checkpoints each writing 1 MiB: a step also ends at 2 MiB of writes.
	heavy := deltaChain(t, s, "heavy", 1)
	for step := 1; step < 11; step++ {
		var err error
		if heavy, err = s.Put(ctx, heavy, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil); err != nil {
			t.Fatal(err)
		}
		must(t, s.PutWrites(ctx, heavy, []checkpoint.Write{{Channel: "log", Value: fmt.Sprint(step, strings.Repeat("w", 1<<20))}}, "task", ""))
	}
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	ctr.Reset()
	h, err := s.DeltaChannelHistory(ctx, heavy, []string{"log"})
	if err != nil {
		t.Fatal(err)
	}
	if hist := h["log"]; !hist.HasSeed || len(hist.Writes) != 10 || ctr.Load() != 5 {
		t.Errorf("heavy: seed %v, %d writes in %d round trips, want 10 in 5 steps (2 ancestors each)", hist.HasSeed, len(hist.Writes), ctr.Load())
	} else if v := fmt.Sprint(hist.Writes[9].Value); !strings.HasPrefix(v, "9w") {
		t.Errorf("heavy: the last write starts %.5q, want the 9th step's", v)
	}
	for _, c := range []struct {
		head         checkpoint.Config
		trips        int64
		steps, extra int
	}{{small, 1, 999, 0}, {fat, 8, 150, 200}} {
		ctr.Reset()
		h, err := s.DeltaChannelHistory(ctx, c.head, []string{"log"})
		if err != nil {
			t.Fatal(err)
		}
		if got := ctr.Load(); got != c.trips {
			t.Errorf("%s: %d round trips, want %d", c.head.ThreadID, got, c.trips)
		}
		var want []any
		for step := range c.steps {
			want = append(want, deltaWrites(step, c.extra)...)
		}
		hist := h["log"]
		got := make([]any, len(hist.Writes))
		for i, w := range hist.Writes {
			got[i] = w.Value
		}
		if !hist.HasSeed || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: seed %v, %d writes, want %d in order", c.head.ThreadID, hist.HasSeed, len(got), len(want))
		}
	}
}

// deltaChain writes n checkpoints: a DeltaSnapshot of "log" at the first,
// and on each the writes to "log" of deltaWrites (the head's own writes
// are not history), 1 plus extra[0] if given.
func deltaChain(t testing.TB, s *redissaver.Saver, thread string, n int, extra ...int) checkpoint.Config {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: thread}
	more := 0
	if len(extra) > 0 {
		more = extra[0]
	}
	for step := range n {
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
		var nv map[string]string
		if step == 0 {
			cp.ChannelValues["log"] = checkpoint.DeltaSnapshot{Value: []any{}}
			cp.ChannelVersions["log"] = "1"
			nv = map[string]string{"log": "1"}
		}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step}, nv); err != nil {
			t.Fatal(err)
		}
		var ws []checkpoint.Write
		for _, v := range deltaWrites(step, more) {
			ws = append(ws, checkpoint.Write{Channel: "log", Value: v})
		}
		if err := s.PutWrites(ctx, cfg, ws, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// deltaWrites are the values deltaChain writes at a step, in index order:
// "w<step>", then extra more.
func deltaWrites(step, extra int) []any {
	out := []any{fmt.Sprint("w", step)}
	for k := range extra {
		out = append(out, fmt.Sprintf("w%d.%d", step, k))
	}
	return out
}
