package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"
)

// updateGolden is the environment variable that makes checkGolden rewrite
// the files of testdata/ instead of comparing with them:
//
//	REDCHECK_UPDATE_GOLDEN=1 go test -run Golden ./cmd/redcheck/
const updateGolden = "REDCHECK_UPDATE_GOLDEN"

// checkGolden compares got with testdata/name, or writes it there with
// REDCHECK_UPDATE_GOLDEN=1.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv(updateGolden) == "1" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with %s=1)", err, updateGolden)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (regenerate with %s=1 if the change is meant):\n--- got\n%s--- want\n%s", path, updateGolden, got, want)
	}
}

// t0 is the time of the fixture's first checkpoint; fixedNow the clock of
// the tests, 90 minutes later.
var (
	t0       = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fixedNow = t0.Add(90 * time.Minute)
)

// fixedID returns a ULID of time at with a fixed random part.
func fixedID(at time.Time, n byte) string {
	return ulid.MustNew(ulid.Timestamp(at), bytes.NewReader(bytes.Repeat([]byte{n}, 10))).String()
}

// fixture holds the IDs of the deterministic store demo writes.
type fixture struct {
	url, prefix       string
	d1, d2, d3, d4    string // thread "demo", oldest first
	other, sub, quiet string
}

// demo writes a deterministic store under a new prefix of rdb: thread
// "demo" with four checkpoints (an input, three loop steps; the last with
// pending writes and an interrupt), its subgraph namespace "child:1", thread
// "other" ten minutes later and thread "quiet", a day older.
func demo(t *testing.T, rdb *redis.Client) fixture {
	t.Helper()
	ctx := context.Background()
	f := fixture{url: "redis://" + rdb.Options().Addr, prefix: redistest.Prefix(t)}
	s, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: f.prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	put := func(cfg checkpoint.Config, id string, at time.Time, md checkpoint.Metadata, values map[string]any, versions, newVersions map[string]string) checkpoint.Config {
		t.Helper()
		cp := checkpoint.Checkpoint{V: 4, ID: id, TS: at.Format(time.RFC3339Nano), ChannelValues: values, ChannelVersions: versions}
		next, err := s.Put(ctx, cfg, cp, md, newVersions)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	f.d1, f.d2, f.d3, f.d4 = fixedID(t0, 1), fixedID(t0.Add(time.Second), 2), fixedID(t0.Add(2*time.Second), 3), fixedID(t0.Add(3*time.Second), 4)
	c := put(checkpoint.Root("demo", ""), f.d1, t0, checkpoint.Metadata{"step": -1, "source": "input", "run_id": "run-1"},
		map[string]any{"__start__": map[string]any{"messages": []any{"hi"}}},
		map[string]string{"__start__": "1"}, map[string]string{"__start__": "1"})
	c = put(c, f.d2, t0.Add(time.Second), checkpoint.Metadata{"step": 0, "source": "loop", "run_id": "run-1"},
		map[string]any{"messages": []any{"hi"}, "count": 1},
		map[string]string{"__start__": "1", "messages": "1", "count": "1"}, map[string]string{"messages": "1", "count": "1"})
	c = put(c, f.d3, t0.Add(2*time.Second), checkpoint.Metadata{"step": 1, "source": "loop", "run_id": "run-1"},
		map[string]any{"messages": []any{"hi", "hello"}, "count": 2, "blob": []byte{0, 1, 2}, "profile": map[string]any{"name": "ada", "tags": []any{"x"}}},
		map[string]string{"messages": "2", "count": "2", "blob": "1", "profile": "1"}, map[string]string{"messages": "2", "count": "2", "blob": "1", "profile": "1"})
	c = put(c, f.d4, t0.Add(3*time.Second), checkpoint.Metadata{"step": 2, "source": "loop", "run_id": "run-1"},
		map[string]any{"profile": map[string]any{"name": "ada lovelace", "tags": []any{"x"}, "a/b": nil}},
		map[string]string{"messages": "2", "count": "2", "blob": "1", "profile": "2"}, map[string]string{"profile": "2"})
	if err := s.PutWrites(ctx, c, []checkpoint.Write{{Channel: "messages", Value: "next"}}, "task-1", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, c, []checkpoint.Write{{Channel: checkpoint.InterruptChannel, Value: map[string]any{"value": "approve?", "id": "i-1"}}}, "task-2", ""); err != nil {
		t.Fatal(err)
	}
	f.sub = fixedID(t0.Add(2500*time.Millisecond), 5)
	put(checkpoint.Root("demo", "child:1"), f.sub, t0.Add(2500*time.Millisecond), checkpoint.Metadata{"step": 0, "source": "loop"},
		map[string]any{"inner": true}, map[string]string{"inner": "1"}, map[string]string{"inner": "1"})
	f.other = fixedID(t0.Add(10*time.Minute), 6)
	put(checkpoint.Root("other", ""), f.other, t0.Add(10*time.Minute), checkpoint.Metadata{"step": -1, "source": "input"},
		map[string]any{"x": 1.5}, map[string]string{"x": "1"}, map[string]string{"x": "1"})
	f.quiet = fixedID(t0.Add(-24*time.Hour), 7)
	put(checkpoint.Root("quiet", ""), f.quiet, t0.Add(-24*time.Hour), checkpoint.Metadata{"source": "update"},
		map[string]any{}, map[string]string{}, map[string]string{})
	return f
}

// withClock fixes the commands' clock for the test.
func withClock(t *testing.T) {
	clock = func() time.Time { return fixedNow }
	t.Cleanup(func() { clock = time.Now })
}

// servers runs fn against miniredis and a real Redis.
func servers(t *testing.T, fn func(t *testing.T, f fixture)) {
	withClock(t)
	_, mini := redistest.Mini(t)
	for _, c := range []struct {
		name string
		rdb  func() *redis.Client
	}{{"miniredis", func() *redis.Client { return mini }}, {"redis", func() *redis.Client { return redistest.Real(t) }}} {
		t.Run(c.name, func(t *testing.T) { fn(t, demo(t, c.rdb())) })
	}
}

func (f fixture) args(cmd string, rest ...string) []string {
	return append([]string{cmd, "--url", f.url, "--prefix", f.prefix, "--shards", "4"}, rest...)
}

// mustRun runs the command line and fails the test unless it exits want.
func mustRun(t *testing.T, want int, args ...string) string {
	t.Helper()
	code, out, errs := runArgs(t, args...)
	if code != want {
		t.Fatalf("redcheck %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, want, out, errs)
	}
	return out
}

// decodeStrict decodes out into v, refusing fields v does not declare.
func decodeStrict(t *testing.T, out string, v any) {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(out))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
}

func TestThreadsGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		checkGolden(t, "threads.golden", mustRun(t, 0, f.args("threads")...))
		checkGolden(t, "threads_since.golden", mustRun(t, 0, f.args("threads", "--since", "2h", "--limit", "1")...))
		checkGolden(t, "threads_filter.golden", mustRun(t, 0, f.args("threads", "--filter", "step=1", "--filter", "source=loop")...))

		var doc threadsDoc
		decodeStrict(t, mustRun(t, 0, f.args("threads", "--json")...), &doc)
		if len(doc.Threads) != 3 {
			t.Fatalf("threads --json: %+v", doc)
		}
		o, d, q := doc.Threads[0], doc.Threads[1], doc.Threads[2]
		if o.ThreadID != "other" || d.ThreadID != "demo" || q.ThreadID != "quiet" {
			t.Fatalf("not newest first: %+v", doc)
		}
		if d.CheckpointID != f.d4 || d.Step == nil || *d.Step != 2 || d.Source != "loop" || d.Writes != 2 || d.Channels != 4 ||
			d.Bytes <= 0 || d.Time != "2025-01-02T03:04:08Z" || d.AgeSeconds == nil || *d.AgeSeconds != 90*60-3 ||
			d.TS != t0.Add(3*time.Second).Format(time.RFC3339Nano) {
			t.Errorf("demo: %+v", d)
		}
		if q.Step != nil || q.Source != "update" || q.Bytes != 0 {
			t.Errorf("quiet: %+v", q)
		}
		decodeStrict(t, mustRun(t, 0, f.args("threads", "--json", "--since", "85m")...), &doc)
		if len(doc.Threads) != 1 || doc.Threads[0].ThreadID != "other" {
			t.Errorf("--since 85m: %+v", doc)
		}
		// Another prefix holds nothing, and is left without a meta key.
		empty := redistest.Prefix(t)
		decodeStrict(t, mustRun(t, 0, "threads", "--url", f.url, "--prefix", empty, "--json"), &doc)
		if len(doc.Threads) != 0 {
			t.Errorf("empty prefix: %+v", doc)
		}
		if out := mustRun(t, 0, "threads", "--url", f.url, "--prefix", empty); out != "no threads\n" {
			t.Errorf("empty prefix: %q", out)
		}
	})
}

func TestHistoryGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		checkGolden(t, "history.golden", mustRun(t, 0, f.args("history", "demo")...))
		checkGolden(t, "history_limit_ns.golden", mustRun(t, 0, append(f.args("history", "--limit", "2"), "demo")...)+
			mustRun(t, 0, f.args("history", "demo", "--ns", "child:1")...))

		var doc historyDoc
		decodeStrict(t, mustRun(t, 0, f.args("history", "demo", "--json")...), &doc)
		if doc.ThreadID != "demo" || doc.CheckpointNS != "" || len(doc.Checkpoints) != 4 {
			t.Fatalf("history --json: %+v", doc)
		}
		want := []struct {
			id, parent string
			step       int64
			writes     int
			changed    []string
		}{
			{f.d4, f.d3, 2, 2, []string{"profile"}},
			{f.d3, f.d2, 1, 0, []string{"__start__", "blob", "count", "messages", "profile"}},
			{f.d2, f.d1, 0, 0, []string{"count", "messages"}},
			{f.d1, "", -1, 0, []string{"__start__"}},
		}
		for i, w := range want {
			r := doc.Checkpoints[i]
			if r.CheckpointID != w.id || r.ParentID != w.parent || r.Step == nil || *r.Step != w.step || r.Writes != w.writes ||
				!reflect.DeepEqual(r.Changed, w.changed) || r.Bytes <= 0 || r.Source == "" || r.AgeSeconds == nil {
				t.Errorf("checkpoint %d: %+v, want %+v", i, r, w)
			}
		}
		// A thread without checkpoints: exit 1.
		if code, _, errs := runArgs(t, f.args("history", "nope")...); code != exitFound || !strings.Contains(errs, "no checkpoints") {
			t.Errorf("unknown thread: exit %d, %s", code, errs)
		}
	})
}

func TestShowGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		checkGolden(t, "show.golden", mustRun(t, 0, f.args("show", "demo")...))
		checkGolden(t, "show_id.golden", mustRun(t, 0, f.args("show", "demo", f.d3)...))

		var doc showDoc
		decodeStrict(t, mustRun(t, 0, f.args("show", "--json", "demo")...), &doc)
		if doc.CheckpointID != f.d4 || doc.ParentID != f.d3 || doc.Step == nil || *doc.Step != 2 || doc.Source != "loop" ||
			doc.Metadata["run_id"] != "run-1" || len(doc.Channels) != 4 || len(doc.Versions) != 4 || doc.Versions["profile"] != "2" {
			t.Fatalf("show --json: %+v", doc)
		}
		if doc.Channels["blob"] != "AAEC" || !reflect.DeepEqual(doc.Channels["messages"], []any{"hi", "hello"}) {
			t.Errorf("channels: %#v", doc.Channels)
		}
		if len(doc.PendingWrites) != 2 || doc.PendingWrites[0] != (writeDoc{"task-1", "messages", "next"}) ||
			doc.PendingWrites[1].Channel != checkpoint.InterruptChannel {
			t.Errorf("pending writes: %+v", doc.PendingWrites)
		}
		if len(doc.Interrupts) != 1 || doc.Interrupts[0].TaskID != "task-2" ||
			!reflect.DeepEqual(doc.Interrupts[0].Value, map[string]any{"value": "approve?", "id": "i-1"}) {
			t.Errorf("interrupts: %+v", doc.Interrupts)
		}
		decodeStrict(t, mustRun(t, 0, f.args("show", "--json", "--ns", "child:1", "demo", f.sub)...), &doc)
		if doc.CheckpointNS != "child:1" || doc.Channels["inner"] != true || doc.ParentID != "" {
			t.Errorf("subgraph: %+v", doc)
		}
		for _, args := range [][]string{f.args("show", "demo", fixedID(t0, 9)), f.args("show", "nope"), f.args("show", "demo", "--ns", "nope")} {
			if code, _, errs := runArgs(t, args...); code != exitFound || !strings.Contains(errs, "not found") {
				t.Errorf("%q: exit %d, %s; want 1, not found", args, code, errs)
			}
		}
	})
}

func TestDiffGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		checkGolden(t, "diff.golden", mustRun(t, 0, f.args("diff", "demo", f.d4)...))
		checkGolden(t, "diff_explicit.golden", mustRun(t, 0, f.args("diff", "demo", f.d3, f.d1)...)+
			mustRun(t, 0, f.args("diff", "demo", f.d1)...)+
			mustRun(t, 0, f.args("diff", "demo", f.d3)...))

		// --json: a JSON Patch that turns B's values into A's.
		for _, c := range []struct{ a, b string }{{f.d4, f.d3}, {f.d3, f.d1}, {f.d1, ""}, {f.d1, f.d4}, {f.d2, f.d2}} {
			args := f.args("diff", "--json", "demo", c.a)
			if c.b != "" {
				args = append(args, c.b)
			}
			var ops []patchOp
			decodeStrict(t, mustRun(t, 0, args...), &ops)
			from := map[string]any{}
			if c.b != "" {
				from = values(t, f, c.b)
			}
			got := applyPatch(t, from, ops)
			if want := values(t, f, c.a); !reflect.DeepEqual(got, want) {
				t.Errorf("diff %s %s: patch %+v gives\n%#v\nwant\n%#v", c.a, c.b, ops, got, want)
			}
			if c.a == c.b && len(ops) != 0 {
				t.Errorf("a checkpoint against itself: %+v", ops)
			}
		}
		out := mustRun(t, 0, f.args("diff", "--json", "demo", f.d4)...)
		var ops []patchOp
		decodeStrict(t, out, &ops)
		want := []patchOp{
			{Op: "add", Path: "/profile/a~1b", Value: nil},
			{Op: "replace", Path: "/profile/name", Value: "ada lovelace"},
		}
		if !reflect.DeepEqual(ops, want) || !strings.Contains(out, `"value": null`) {
			t.Errorf("diff --json demo d4:\n%s", out)
		}
		if code, _, _ := runArgs(t, f.args("diff", "demo", f.d4, fixedID(t0, 9))...); code != exitFound {
			t.Errorf("missing B: exit %d, want 1", code)
		}
	})
}

// values returns the channel values of a demo checkpoint as show --json
// prints them.
func values(t *testing.T, f fixture, id string) map[string]any {
	t.Helper()
	var doc showDoc
	decodeStrict(t, mustRun(t, 0, f.args("show", "--json", "demo", id)...), &doc)
	return doc.Channels
}

// applyPatch applies the add, remove and replace operations of a JSON Patch
// to a copy of doc (objects only: that is all diff emits paths into).
func applyPatch(t *testing.T, doc map[string]any, ops []patchOp) map[string]any {
	t.Helper()
	var cp func(v any) any
	cp = func(v any) any {
		if m, ok := v.(map[string]any); ok {
			out := map[string]any{}
			for k, e := range m {
				out[k] = cp(e)
			}
			return out
		}
		return v
	}
	root := cp(doc).(map[string]any)
	for _, op := range ops {
		toks := strings.Split(op.Path, "/")[1:]
		parent := root
		for _, tok := range toks[:len(toks)-1] {
			parent = parent[unescape(tok)].(map[string]any)
		}
		last := unescape(toks[len(toks)-1])
		switch op.Op {
		case "add", "replace":
			parent[last] = op.Value
		case "remove":
			if _, ok := parent[last]; !ok {
				t.Fatalf("remove of a missing %s", op.Path)
			}
			delete(parent, last)
		default:
			t.Fatalf("op %q", op.Op)
		}
	}
	return root
}

func unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

func TestIDTime(t *testing.T) {
	at := time.Date(2024, 7, 31, 12, 0, 0, 123456700, time.UTC)
	for _, c := range []struct {
		id   string
		want time.Time
		ok   bool
	}{
		{fixedID(at, 1), at.Truncate(time.Millisecond), true},
		// LangGraph's uuid6 and a UUIDv7 / v1 of the same instant.
		{uuidV6(at), at, true},
		{"0190f8a0-44bb-7000-8000-000000000000", time.UnixMilli(0x0190f8a044bb).UTC(), true},
		{uuidV1(at), at, true},
		{"1ef4f3a2-0000-4000-8000-000000000000", time.Time{}, false}, // v4: no time
		{"checkpoint-7", time.Time{}, false},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAVX", time.Time{}, false},
		{"ZZZZZZZZZZZZZZZZZZZZZZZZZZ", time.Time{}, false},
	} {
		got, ok := idTime(c.id)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("idTime(%q) = %v %v, want %v %v", c.id, got, ok, c.want, c.ok)
		}
	}
	// Without a time-ordered ID, the ts field tells.
	got, ok := checkpointTime(checkpoint.Checkpoint{ID: "checkpoint-7", TS: "2024-07-31T12:00:00.123456+00:00"})
	if !ok || !got.Equal(time.Date(2024, 7, 31, 12, 0, 0, 123456000, time.UTC)) {
		t.Errorf("ts fallback: %v %v", got, ok)
	}
	if _, ok := checkpointTime(checkpoint.Checkpoint{ID: "checkpoint-7", TS: "yesterday"}); ok {
		t.Errorf("neither ID nor ts tells: ok")
	}
}

// uuidV6 formats the version 6 UUID of at, as LangGraph's uuid6 does.
func uuidV6(at time.Time) string {
	ts := uint64(at.UnixNano()/100) + 0x01B21DD213814000
	hi := ts >> 12 & 0xFFFFFFFFFFFF
	lo := ts&0x0FFF | 0x6000
	return fmtUUID(hi>>16, hi&0xFFFF, lo)
}

// uuidV1 formats the version 1 UUID of at.
func uuidV1(at time.Time) string {
	ts := uint64(at.UnixNano()/100) + 0x01B21DD213814000
	return fmtUUID(ts&0xFFFFFFFF, ts>>32&0xFFFF, ts>>48&0x0FFF|0x1000)
}

func fmtUUID(a, b, c uint64) string {
	h := func(n uint64, w int) string {
		s := strconv.FormatUint(n, 16)
		return strings.Repeat("0", w-len(s)) + s
	}
	return h(a, 8) + "-" + h(b, 4) + "-" + h(c, 4) + "-8123-0123456789ab"
}

func TestPlain(t *testing.T) {
	in := map[string]any{
		"i": int64(-3), "u": uint64(1 << 63), "f": 1.5, "whole": 2.0, "nan": func() float64 { z := 0.0; return z / z }(),
		"b": []byte("hi"), "t": time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "d": checkpoint.DeltaSnapshot{Value: []any{int64(1)}},
		"n": nil, "s": "x", "ok": true,
	}
	got := compactJSON(plain(in))
	want := `{"b":"aGk=","d":{"$delta_snapshot":[1]},"f":1.5,"i":-3,"n":null,"nan":"NaN","ok":true,"s":"x","t":"2025-01-02T03:04:05Z","u":9223372036854775808,"whole":2}`
	if got != want {
		t.Errorf("plain:\n got %s\nwant %s", got, want)
	}
}

func TestInspectUsage(t *testing.T) {
	mr, _ := redistest.Mini(t)
	url := "redis://" + mr.Addr()
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"threads", "-h"}, 0, "usage: redcheck threads"},
		{[]string{"history", "-h"}, 0, "usage: redcheck history THREAD"},
		{[]string{"show", "-h"}, 0, "usage: redcheck show THREAD"},
		{[]string{"diff", "-h"}, 0, "usage: redcheck diff THREAD A [B]"},
		{[]string{"threads", "--url", url, "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"threads", "--url", url, "--filter", "novalue"}, 2, "want key=value"},
		{[]string{"threads", "--url", url, "--limit", "-1"}, 2, "must not be negative"},
		{[]string{"history", "--url", url}, 2, "missing argument"},
		{[]string{"history", "--url", url, "a", "b"}, 2, `unexpected argument "b"`},
		{[]string{"show", "--url", url, "a", "b", "c"}, 2, `unexpected argument "c"`},
		{[]string{"diff", "--url", url, "a"}, 2, "missing argument"},
		{[]string{"show", "--url", url, ""}, 2, "empty thread ID"},
		{[]string{"show", "--url", url, "--ns", strings.Repeat("n", 5000), "t"}, 2, "invalid"},
		{[]string{"show", "--url", "redis://127.0.0.1:1", "t"}, 2, "cannot reach Redis"},
		{[]string{"history", "--url", url, "--shards", "0x"}, 2, "invalid value"},
		// A prefix without data: nothing to show, nothing written.
		{[]string{"show", "--url", url, "t"}, 1, "not found"},
		{[]string{"history", "--url", url, "t"}, 1, "not found"},
		{[]string{"diff", "--url", url, "t", "A"}, 1, "not found"},
	} {
		code, out, errs := runArgs(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.stderr) {
			t.Errorf("redcheck %q: exit %d, stderr %q; want %d and %q (stdout %q)", c.args, code, errs, c.code, c.stderr, out)
		}
	}
	if keys := mr.Keys(); len(keys) != 0 {
		t.Errorf("inspecting an empty prefix wrote %q", keys)
	}
	// Flags after the positional arguments, and "--" before a thread that
	// starts with "-".
	_, rdb := redistest.Mini(t)
	f := demo(t, rdb)
	withClock(t)
	a := mustRun(t, 0, "show", "demo", "--url", f.url, "--prefix", f.prefix, "--shards", "4", "--json")
	b := mustRun(t, 0, f.args("show", "--json", "--", "demo")...)
	if a != b || !strings.Contains(a, f.d4) {
		t.Errorf("flags after the thread:\n%s\nvs\n%s", a, b)
	}
	// Another shard count than the prefix's: a usage error.
	if code, _, errs := runArgs(t, "threads", "--url", f.url, "--prefix", f.prefix, "--shards", "8"); code != exitUsage || !strings.Contains(errs, "shards") {
		t.Errorf("shard mismatch: exit %d, %s", code, errs)
	}
}

// TestShowDeltaChannel: a channel with a version and no value stored (a
// delta channel) shows its seed and the writes since, from
// DeltaChannelHistory.
func TestShowDeltaChannel(t *testing.T) {
	withClock(t)
	_, rdb := redistest.Mini(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	cfg := checkpoint.Root("d", "")
	for i, v := range []string{"1", "2", "3"} {
		values := map[string]any{}
		if i == 0 {
			values["log"] = checkpoint.DeltaSnapshot{Value: []any{"a"}}
		}
		cp := checkpoint.Checkpoint{V: 4, ID: fixedID(t0.Add(time.Duration(i)*time.Second), byte(i)), ChannelValues: values, ChannelVersions: map[string]string{"log": v}}
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, map[string]string{"log": v}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "log", Value: string(rune('b' + i))}}, "task", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := []string{"show", "--url", "redis://" + rdb.Options().Addr, "--prefix", prefix, "--shards", "4", "d"}
	var doc showDoc
	decodeStrict(t, mustRun(t, 0, append(args, "--json")...), &doc)
	d, ok := doc.DeltaChannels["log"]
	if !ok || !d.HasSeed || !reflect.DeepEqual(d.Seed, map[string]any{"$delta_snapshot": []any{"a"}}) ||
		len(d.Writes) != 2 || d.Writes[0].Value != "b" || d.Writes[1].Value != "c" || len(doc.Channels) != 0 {
		t.Fatalf("delta channel: %+v", doc)
	}
	out := mustRun(t, 0, args...)
	if !strings.Contains(out, `log @3: delta channel, seed {"$delta_snapshot":["a"]}, 2 writes since`) || !strings.Contains(out, `task task: "c"`) {
		t.Errorf("human format:\n%s", out)
	}
}

// TestClusterInspect runs the inspection commands against a real Redis
// Cluster.
func TestClusterInspect(t *testing.T) {
	redistest.RequireCluster(t)
	withClock(t)
	c := redistest.StartCluster(t, 3, 0)
	rdb := c.Client(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, th := range []string{"a", "b", "c"} {
		cfg := checkpoint.Root(th, "")
		for j := range 2 {
			id := fixedID(t0.Add(time.Duration(i*10+j)*time.Second), byte(j))
			cp := checkpoint.Checkpoint{V: 4, ID: id, ChannelValues: map[string]any{"n": j}, ChannelVersions: map[string]string{"n": strconv.Itoa(j + 1)}}
			if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": j}, cp.ChannelVersions); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
	}
	addrs := c.Addrs()
	base := func(cmd string, rest ...string) []string {
		return append([]string{cmd, "--cluster", "--url", "redis://" + addrs[0] + "?addr=" + addrs[1] + "&addr=" + addrs[2], "--prefix", prefix, "--shards", "4"}, rest...)
	}
	var threads threadsDoc
	decodeStrict(t, mustRun(t, 0, base("threads", "--json")...), &threads)
	if len(threads.Threads) != 3 || threads.Threads[0].ThreadID != "c" || threads.Threads[0].CheckpointID != ids[5] || threads.Threads[2].ThreadID != "a" {
		t.Fatalf("threads: %+v", threads)
	}
	var hist historyDoc
	decodeStrict(t, mustRun(t, 0, base("history", "b", "--json")...), &hist)
	if len(hist.Checkpoints) != 2 || hist.Checkpoints[0].CheckpointID != ids[3] || hist.Checkpoints[0].ParentID != ids[2] {
		t.Fatalf("history: %+v", hist)
	}
	var ops []patchOp
	decodeStrict(t, mustRun(t, 0, base("diff", "b", ids[3], "--json")...), &ops)
	if len(ops) != 1 || ops[0].Path != "/n" {
		t.Fatalf("diff: %+v", ops)
	}
}
