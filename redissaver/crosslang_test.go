package redissaver_test

// Cross-language tests with the TypeScript client (js/, @graphstate/redcheck).
// They are driven by js/test/crosslang.test.ts, which sets
// REDCHECK_CROSSLANG to a directory of exchange files and REDIS_URL to the
// server both sides use; without REDCHECK_CROSSLANG they skip.
//
//   - TestCrossLangScripts: the scripts the JS build copied (js/lua) are
//     byte for byte scripts.Source.
//   - TestCrossLangGoWrites: the Go saver writes a scenario and dumps what
//     its GetTuple, List and DeltaChannelHistory return (go_written.json);
//     the JS side reads the same data and compares.
//   - TestCrossLangJSReads: the JS side wrote a scenario and dumped what it
//     expects the Go side to read (js_written.json): GetTuple, List and
//     DeltaChannelHistory must return it, every JS checkpoint must appear
//     exactly once in stream.Subscribe, and Check must find no violation.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/formatvec"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scripts"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
)

// crossDir returns the exchange directory, or skips the test.
func crossDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("REDCHECK_CROSSLANG")
	if dir == "" {
		t.Skip("REDCHECK_CROSSLANG is unset: run by js/test/crosslang.test.ts")
	}
	return dir
}

// xTuple is a checkpoint tuple as both sides dump it.
type xTuple struct {
	Thread          string                       `json:"thread"`
	NS              string                       `json:"ns"`
	ID              string                       `json:"id"`
	Parent          string                       `json:"parent"`
	V               int                          `json:"v"`
	TS              string                       `json:"ts"`
	ChannelValues   map[string]formatvec.Value   `json:"channel_values"`
	ChannelVersions map[string]string            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]string `json:"versions_seen"`
	Metadata        map[string]formatvec.Value   `json:"metadata"`
	PendingWrites   []xWrite                     `json:"pending_writes"`
}

type xWrite struct {
	Task    string          `json:"task"`
	Channel string          `json:"channel"`
	Value   formatvec.Value `json:"value"`
}

type xList struct {
	Thread string   `json:"thread"`
	NS     *string  `json:"ns"`
	IDs    []string `json:"ids"`
}

type xDelta struct {
	Thread  string           `json:"thread"`
	NS      string           `json:"ns"`
	ID      string           `json:"id"`
	Channel string           `json:"channel"`
	HasSeed bool             `json:"has_seed"`
	Seed    *formatvec.Value `json:"seed"`
	Writes  []xWrite         `json:"writes"`
}

type xDoc struct {
	Prefix string   `json:"prefix"`
	Shards int      `json:"shards"`
	Tuples []xTuple `json:"tuples"`
	Lists  []xList  `json:"lists"`
	Deltas []xDelta `json:"deltas"`
}

// typed gives a value read by the Go saver in the typed notation.
func typed(t *testing.T, v any) formatvec.Value {
	t.Helper()
	switch x := v.(type) {
	case nil:
		return formatvec.Null()
	case bool:
		return formatvec.Bool(x)
	case int64:
		return formatvec.Int(x)
	case int:
		return formatvec.Int(int64(x))
	case uint64:
		return formatvec.Uint(x)
	case float64:
		return formatvec.Float(x)
	case string:
		if !utf8.ValidString(x) {
			return formatvec.StrHex(x)
		}
		return formatvec.Str(x)
	case []byte:
		return formatvec.Bytes(x)
	case []any:
		out := make([]formatvec.Value, len(x))
		for i, e := range x {
			out[i] = typed(t, e)
		}
		return formatvec.List(out...)
	case map[string]any:
		kv := make([]any, 0, 2*len(x))
		for k, e := range x {
			kv = append(kv, k, typed(t, e))
		}
		return formatvec.Map(kv...)
	case checkpoint.DeltaSnapshot:
		return formatvec.Delta(typed(t, x.Value))
	}
	t.Fatalf("no typed notation for %T", v)
	return formatvec.Value{}
}

func typedMap(t *testing.T, m map[string]any) map[string]formatvec.Value {
	out := make(map[string]formatvec.Value, len(m))
	for k, v := range m {
		out[k] = typed(t, v)
	}
	return out
}

func typedWrites(t *testing.T, ws []checkpoint.PendingWrite) []xWrite {
	out := make([]xWrite, 0, len(ws))
	for _, w := range ws {
		out = append(out, xWrite{Task: w.TaskID, Channel: w.Channel, Value: typed(t, w.Value)})
	}
	return out
}

func dumpTuple(t *testing.T, tp *checkpoint.Tuple) xTuple {
	parent := ""
	if tp.ParentConfig != nil {
		parent = tp.ParentConfig.CheckpointID
	}
	return xTuple{
		Thread: tp.Config.ThreadID, NS: tp.Config.CheckpointNS, ID: tp.Checkpoint.ID, Parent: parent,
		V: tp.Checkpoint.V, TS: tp.Checkpoint.TS, ChannelValues: typedMap(t, tp.Checkpoint.ChannelValues),
		ChannelVersions: tp.Checkpoint.ChannelVersions, VersionsSeen: tp.Checkpoint.VersionsSeen,
		Metadata: typedMap(t, tp.Metadata), PendingWrites: typedWrites(t, tp.PendingWrites),
	}
}

// canon returns the JSON of v with writes in (task, channel) order: the JS
// side orders a checkpoint's writes by (task path, task, index), the Go side
// by (task, index).
func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(back, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func sortWrites(ws []xWrite) {
	slices.SortStableFunc(ws, func(a, b xWrite) int { return cmp.Compare(a.Task, b.Task) })
}

func TestCrossLangScripts(t *testing.T) {
	dir := os.Getenv("REDCHECK_JS_LUA")
	if dir == "" {
		t.Skip("REDCHECK_JS_LUA is unset: run by js/test/crosslang.test.ts")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.lua"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in %s (%v)", dir, err)
	}
	for _, f := range files {
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := scripts.Source(filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s differs from scripts.Source", f)
		}
	}
	t.Logf("%d scripts identical", len(files))
}

// TestCrossLangGoWrites writes a scenario with the Go saver (MsgpackSerializer)
// and dumps what it reads back, for the JS side to compare with.
func TestCrossLangGoWrites(t *testing.T) {
	dir := crossDir(t)
	ctx := context.Background()
	rdb := redistest.Real(t)
	doc := xDoc{Prefix: redistest.Prefix(t), Shards: 4}
	// Compression on: "story" and its writes are stored compressed, the small values plain.
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: doc.Prefix, Shards: doc.Shards, Compression: redissaver.Compression{Enabled: true, MinBytes: 256}})
	if err != nil {
		t.Fatal(err)
	}
	story := strings.Repeat("the agent calls a tool and reads its result. ", 40)
	message := map[string]any{"lc": int64(1), "type": "constructor", "id": []any{"langchain_core", "messages", "AIMessage"},
		"kwargs": map[string]any{"content": "hello from Go", "tool_calls": []any{}, "invalid_tool_calls": []any{}, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}}
	// "noise" does not compress: the first checkpoint's values hold over 32 KiB, which both sides read
	// out of Lua (docs/storage-format.md, "Values out of Lua").
	noise := make([]byte, 40<<10)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	values := []map[string]any{
		{"messages": checkpoint.DeltaSnapshot{Value: []any{"m0"}}, "count": int64(1), "ratio": 1.5, "name": "go",
			"blob": []byte{0, 1, 255}, "nothing": nil, "nested": map[string]any{"a": []any{int64(1), "x", true}, "big": int64(1) << 60}, "story": story,
			"noise": noise},
		{"count": int64(2), "last": message},
		{"count": int64(3)},
	}
	var ids []string
	for _, ns := range []string{"", "sub:1"} {
		cfg := checkpoint.Config{ThreadID: "go-thread", CheckpointNS: ns}
		prev := checkpoint.Empty()
		for step, upd := range values {
			cp, newVersions := checkpoint.Next(prev, upd, nil)
			md := checkpoint.Metadata{"source": "loop", "step": step, "parents": map[string]any{}, "writer": "go", "score": 0.25}
			cfg, err = s.Put(ctx, cfg, cp, md, newVersions)
			if err != nil {
				t.Fatal(err)
			}
			if ns == "" {
				ids = append(ids, cp.ID)
			}
			writes := []checkpoint.Write{{Channel: "messages", Value: fmt.Sprintf("m%d", step+1)}, {Channel: "count", Value: int64(step)},
				{Channel: "story", Value: fmt.Sprint(story, step)}}
			if err := s.PutWrites(ctx, cfg, writes, fmt.Sprintf("task-%d", step), "~__pregel_pull, agent"); err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: checkpoint.InterruptChannel, Value: map[string]any{"value": "ask"}}}, "task-b", ""); err != nil {
				t.Fatal(err)
			}
			prev = cp
		}
	}
	zipped := 0
	for _, v := range rawValues(t, rdb, doc.Prefix) {
		if strings.HasPrefix(v, "z") {
			zipped++
		}
	}
	if zipped != 2+6 {
		t.Fatalf("%d values stored compressed, want story in each namespace and its 6 writes", zipped)
	}
	for _, ns := range []string{"", "sub:1"} {
		for tp, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "go-thread", CheckpointNS: &ns}) {
			if err != nil {
				t.Fatal(err)
			}
			doc.Tuples = append(doc.Tuples, dumpTuple(t, tp))
		}
	}
	got := xList{Thread: "go-thread"}
	for tp, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "go-thread"}) {
		if err != nil {
			t.Fatal(err)
		}
		got.IDs = append(got.IDs, tp.Checkpoint.ID)
	}
	doc.Lists = append(doc.Lists, got)
	appendDeltas(t, &doc, s, "go-thread", ids[len(ids)-1])
	writeXDoc(t, dir, "go_written.json", doc)
}

// appendDeltas adds to doc the histories of the delta channels "messages"
// and "count" up to checkpoint id of thread, as the JS side reads them.
func appendDeltas(t *testing.T, doc *xDoc, s *redissaver.Saver, thread, id string) {
	t.Helper()
	hist, err := s.DeltaChannelHistory(context.Background(), checkpoint.Config{ThreadID: thread, CheckpointID: id}, []string{"messages", "count"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"messages", "count"} {
		h := hist[ch]
		d := xDelta{Thread: thread, ID: id, Channel: ch, HasSeed: h.HasSeed, Writes: typedWrites(t, h.Writes)}
		if h.HasSeed {
			v := typed(t, h.Seed)
			d.Seed = &v
		}
		doc.Deltas = append(doc.Deltas, d)
	}
}

// writeXDoc writes doc as dir/name for the JS side; readXDoc reads what it wrote.
func writeXDoc(t *testing.T, dir, name string, doc xDoc) {
	t.Helper()
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readXDoc(t *testing.T, dir, name string) xDoc {
	t.Helper()
	var doc xDoc
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestCrossLangJSReads reads what the JS side wrote.
func TestCrossLangJSReads(t *testing.T) {
	doc := readXDoc(t, crossDir(t), "js_written.json")
	ctx := context.Background()
	rdb := redistest.Real(t)
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: doc.Prefix, Shards: doc.Shards})
	if err != nil {
		t.Fatal(err)
	}
	threads := map[string]bool{}
	for _, want := range doc.Tuples {
		threads[want.Thread] = true
		tp, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: want.Thread, CheckpointNS: want.NS, CheckpointID: want.ID})
		if err != nil {
			t.Fatalf("GetTuple %s/%q/%s: %v", want.Thread, want.NS, want.ID, err)
		}
		got := dumpTuple(t, tp)
		sortWrites(got.PendingWrites)
		sortWrites(want.PendingWrites)
		if g, w := canon(t, got), canon(t, want); g != w {
			t.Errorf("GetTuple %s/%q/%s:\n got %s\nwant %s", want.Thread, want.NS, want.ID, g, w)
		}
	}
	for _, want := range doc.Lists {
		var ids []string
		for tp, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: want.Thread, CheckpointNS: want.NS}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tp.Checkpoint.ID)
		}
		if !slices.Equal(ids, want.IDs) {
			t.Errorf("List %s %v: %v, want %v", want.Thread, want.NS, ids, want.IDs)
		}
	}
	for _, want := range doc.Deltas {
		hist, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: want.Thread, CheckpointNS: want.NS, CheckpointID: want.ID}, []string{want.Channel})
		if err != nil {
			t.Fatal(err)
		}
		h := hist[want.Channel]
		got := xDelta{Thread: want.Thread, NS: want.NS, ID: want.ID, Channel: want.Channel, HasSeed: h.HasSeed, Writes: typedWrites(t, h.Writes)}
		if h.HasSeed {
			v := typed(t, h.Seed)
			got.Seed = &v
		}
		if g, w := canon(t, got), canon(t, want); g != w {
			t.Errorf("DeltaChannelHistory %s %s:\n got %s\nwant %s", want.ID, want.Channel, g, w)
		}
	}

	// Every checkpoint the JS side wrote appears exactly once in Subscribe.
	sub, err := stream.New(rdb, stream.Options{Prefix: doc.Prefix, Shards: doc.Shards})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for ev, err := range sub.Subscribe(sctx, stream.Query{From: stream.FromBeginning}) {
		if err != nil {
			if sctx.Err() != nil {
				break
			}
			t.Fatalf("Subscribe: %v", err)
		}
		if ev.Type == stream.TypeCheckpoint {
			seen[ev.ThreadID+"/"+ev.CheckpointNS+"/"+ev.CheckpointID]++
		}
		if len(seen) == len(doc.Tuples) {
			cancel()
		}
	}
	for _, tp := range doc.Tuples {
		if n := seen[tp.Thread+"/"+tp.NS+"/"+tp.ID]; n != 1 {
			t.Errorf("checkpoint %s/%q/%s: %d checkpoint events in Subscribe, want 1", tp.Thread, tp.NS, tp.ID, n)
		}
	}
	if len(seen) != len(doc.Tuples) {
		t.Errorf("Subscribe: %d checkpoints, want %d", len(seen), len(doc.Tuples))
	}

	// Check finds no violation in the data the JS side wrote.
	for th := range threads {
		v, err := violations(ctx, s, th)
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != 0 {
			t.Errorf("Check %s: %v", th, v)
		}
	}
	v, err := violations(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 0 {
		t.Errorf("Check (every thread): %v", v)
	}
	t.Logf("%d tuples, %d lists, %d delta histories read; %d checkpoint events; Check: no violation", len(doc.Tuples), len(doc.Lists), len(doc.Deltas), len(seen))
}
