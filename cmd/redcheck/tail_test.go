package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/graphstate/redcheck/internal/keys"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

func TestFormatEvent(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 890e6, time.UTC)
	stamp := at.Local().Format("2006-01-02 15:04:05.000")
	for _, c := range []struct {
		ev   stream.Event
		want string
	}{
		{stream.Event{Time: at, Type: stream.TypeCheckpoint, ThreadID: "t1", CheckpointID: "01A", ParentID: "00Z", Step: 3, HasStep: true, Source: "loop", Channels: []string{"messages", "step"}},
			"checkpoint     thread=t1 checkpoint=01A step=3 source=loop parent=00Z channels=[messages step]"},
		{stream.Event{Time: at, Type: stream.TypeCheckpoint, ThreadID: "my thread", CheckpointNS: "sub:1", CheckpointID: "01B", Values: map[string]any{"a": 1}},
			`checkpoint     thread="my thread" ns=sub:1 checkpoint=01B channels=[] values=1`},
		{stream.Event{Time: at, Type: stream.TypeWrites, ThreadID: "t1", CheckpointID: "01A", TaskID: "task-1", Channels: []string{"out"}},
			"writes         thread=t1 checkpoint=01A task=task-1 channels=[out]"},
		{stream.Event{Time: at, Type: stream.TypeThreadDeleted, ThreadID: "t1", Count: 4},
			"thread_deleted thread=t1 count=4"},
		{stream.Event{Time: at, Type: stream.TypeThreadCopied, ThreadID: "t2", SourceThreadID: "t1", Count: 2},
			"thread_copied  thread=t2 from=t1 count=2"},
		{stream.Event{Time: at, Type: stream.TypeRunsDeleted, ThreadID: "t1", RunIDs: []string{"r1", "r 2"}, Count: 1},
			`runs_deleted   thread=t1 runs="r1,\"r 2\"" count=1`},
		{stream.Event{Time: at, Type: stream.TypePruned, ThreadID: "t1", Strategy: "keep_latest", Count: 9},
			"pruned         thread=t1 strategy=keep_latest count=9"},
		{stream.Event{Time: at, Type: stream.TypeGap, Cursor: "5-0", Gap: &stream.GapError{Stream: "p:t:x:events", Reason: stream.GapTrimmed, From: "1-0", To: "5-0"}},
			"gap            !!! events missing: stream=p:t:x:events reason=trimmed after=1-0 resume=5-0 cursor=5-0"},
		{stream.Event{Time: at, Type: stream.TypeGap, Cursor: "0-0", Gap: &stream.GapError{Stream: "f", Reason: stream.GapStreamLost, From: "1-0"}},
			"gap            !!! events missing: stream=f reason=stream_lost after=1-0 cursor=0-0"},
	} {
		if got := formatEvent(c.ev); got != stamp+" "+c.want {
			t.Errorf("formatEvent:\n got %q\nwant %q", got, stamp+" "+c.want)
		}
	}
}

func TestEventLine(t *testing.T) {
	ev := stream.Event{
		ID: "5-0", Cursor: "5-0", Stream: "s", Time: time.UnixMilli(5), Type: stream.TypeCheckpoint, ThreadID: "t",
		CheckpointID: "01A", Step: -1, HasStep: true, Channels: []string{"x"},
		Values: map[string]any{"x": math.NaN(), "y": []any{"ok"}},
		Writes: []checkpoint.PendingWrite{{TaskID: "k", Channel: "c", Value: math.Inf(1)}},
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(eventLine(ev)), &got); err != nil {
		t.Fatal(err)
	}
	vals, _ := got["values"].(map[string]any)
	writes, _ := got["writes"].([]any)
	if got["type"] != "checkpoint" || got["step"] != float64(-1) || got["cursor"] != "5-0" || vals["x"] != "NaN" ||
		len(writes) != 1 || writes[0].(map[string]any)["value"] != "+Inf" {
		t.Errorf("eventLine: %v", got)
	}
}

func TestStartAt(t *testing.T) {
	sub, err := stream.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), stream.Options{Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	var q stream.Query
	if err := startAt(sub, &q, "beginning"); err != nil || q.From != stream.FromBeginning {
		t.Errorf("beginning: %v %+v", err, q)
	}
	q = stream.Query{}
	if err := startAt(sub, &q, "2025-01-02T03:04:05Z"); err != nil || q.Since.IsZero() {
		t.Errorf("time: %v %+v", err, q)
	}
	for _, c := range []string{"1-0,2-0,3-0,4-1", "1-0~0a1b2c3d,2-0,3-0,4-1~ffffffff"} {
		q = stream.Query{}
		if err := startAt(sub, &q, c); err != nil || q.From != c {
			t.Errorf("cursor %q: %v %+v", c, err, q)
		}
	}
	for _, bad := range []string{"1-0", "x", "1-0,2-0,3-0,4", "1-0,2-0,3-0,4-1~x"} {
		q = stream.Query{}
		if err := startAt(sub, &q, bad); !errors.Is(err, stream.ErrInvalidQuery) || q.From != "" {
			t.Errorf("%q: %v %+v, want ErrInvalidQuery and no From", bad, err, q)
		}
	}
	for _, c := range []string{"7-1", "7-1~0a1b2c3d"} {
		if err := startAt(sub, &stream.Query{ThreadID: "t"}, c); err != nil {
			t.Errorf("one thread's cursor %q: %v", c, err)
		}
	}
}

// syncBuffer is an io.Writer safe for the command's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startTail runs "redcheck tail args..." until the returned stop is called,
// which returns the exit status.
func startTail(t *testing.T, args ...string) (out *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &syncBuffer{}
	var errs syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"tail"}, args...), out, &errs) }()
	return out, func() int {
		cancel()
		select {
		case code := <-done:
			if s := errs.String(); s != "" {
				t.Logf("tail stderr: %s", s)
			}
			return code
		case <-time.After(5 * time.Second):
			t.Fatal("tail did not stop within 5s of its context ending")
			return -1
		}
	}
}

// waitFor polls out until it holds want.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTailCommand(t *testing.T) {
	_, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(cfg checkpoint.Config, step int) checkpoint.Config {
		t.Helper()
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"c": step}, ChannelVersions: map[string]string{"c": checkpoint.NextVersion("")}}
		next, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step, "source": "loop"}, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	base := []string{"--url", "redis://" + rdb.Options().Addr, "--prefix", prefix, "--shards", "4"}

	// --json from the beginning of one thread: old events, then new ones.
	a1 := put(checkpoint.Config{ThreadID: "a"}, 0)
	put(checkpoint.Config{ThreadID: "b"}, 0)
	out, stop := startTail(t, append(base, "--json", "--thread", "a", "--from", "beginning")...)
	waitFor(t, out, a1.CheckpointID)
	a2 := put(a1, 1)
	if err := s.PutWrites(ctx, a2, []checkpoint.Write{{Channel: "out", Value: "v"}}, "task-7", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, `"task-7"`)
	if code := stop(); code != exitOK {
		t.Errorf("exit %d after SIGINT-like cancel, want 0", code)
	}
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	if len(evs) != 3 || evs[0]["checkpoint_id"] != a1.CheckpointID || evs[1]["checkpoint_id"] != a2.CheckpointID ||
		evs[2]["type"] != "writes" || evs[2]["task_id"] != "task-7" || evs[1]["thread_id"] != "a" {
		t.Fatalf("json events of thread a:\n%s", out)
	}

	// Human-readable from now, every thread: keep writing until the
	// subscription, which finds "now" when it starts, shows one.
	out, stop = startTail(t, base...)
	cfg := checkpoint.Config{ThreadID: "c"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		cfg = put(cfg, 5)
		if time.Now().After(deadline) {
			t.Fatalf("no event printed:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
		if strings.Contains(out.String(), cfg.CheckpointID) {
			break
		}
	}
	if err := s.DeleteThread(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, "thread_deleted thread=c")
	stop()
	if !strings.Contains(out.String(), "checkpoint     thread=c checkpoint="+cfg.CheckpointID+" step=5 source=loop") {
		t.Errorf("human-readable output:\n%s", out)
	}
}

func TestTailUsage(t *testing.T) {
	for _, args := range [][]string{
		{"tail", "extra"},
		{"tail", "--from", "nonsense"},
		{"tail", "--shards", "-1"},
		{"tail", "--url", "redis://127.0.0.1:1/0"}, // nothing listens on port 1
	} {
		if code, _, errs := runArgs(t, args...); code != exitUsage || errs == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 with a message", args, code, errs)
		}
	}
	if code, _, _ := runArgs(t, "tail", "-h"); code != exitOK {
		t.Errorf("tail -h: exit %d", code)
	}
}

// TestTailGap: tail resumed from a cursor Redis trimmed away prints a gap
// line, then the events it still holds.
func TestTailGap(t *testing.T) {
	_, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "g"}
	var ids []string
	for range 5 {
		if cfg, err = s.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cfg.CheckpointID)
	}
	key := keys.Of(s).Events("g")
	cursor := rdb.XRangeN(ctx, key, "-", "+", 1).Val()[0].ID
	rdb.XTrimMaxLen(ctx, key, 2)
	out, stop := startTail(t, "--url", "redis://"+rdb.Options().Addr, "--prefix", prefix, "--shards", "1", "--thread", "g", "--from", cursor)
	waitFor(t, out, ids[4])
	stop()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "gap            !!! events missing: stream="+key+" reason=trimmed after="+cursor) ||
		!strings.Contains(lines[1], ids[3]) || !strings.Contains(lines[2], ids[4]) {
		t.Errorf("output:\n%s", out)
	}
}

// TestTailShardMismatch: tail with another shard count than the prefix was
// written with prints the mismatch and exits 2 at once, instead of
// following feeds no saver writes.
func TestTailShardMismatch(t *testing.T) {
	_, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	if _, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--shards", "16"},
		{}, // the default, 16
		{"--shards", "2", "--thread", "t"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var out, errs syncBuffer
		code := run(ctx, append([]string{"tail", "--url", "redis://" + rdb.Options().Addr, "--prefix", prefix}, args...), &out, &errs)
		cancel()
		if code != exitUsage || !strings.Contains(errs.String(), "written with 4 shards") || out.String() != "" {
			t.Errorf("tail %q: exit %d, stderr %q, stdout %q; want exit 2 naming the prefix's 4 shards", args, code, errs.String(), out.String())
		}
	}
}
