package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestThreadsPaging: every thread once, newest first, across pages, with
// threads whose older checkpoints fall on later pages; and the filters.
func TestThreadsPaging(t *testing.T) {
	f := newFixture(t)
	latest := map[string]checkpoint.Config{}
	// Interleaved: each round puts a checkpoint on some threads.
	for round := range 4 {
		for i := range 7 {
			if i%(round+1) != 0 && round > 0 {
				continue
			}
			th := fmt.Sprintf("t%d", i)
			run := "run-even"
			if i%2 == 1 {
				run = "run-odd"
			}
			cfg := latest[th]
			cfg.ThreadID = th
			latest[th] = f.putMD(t, cfg, checkpoint.Metadata{"source": "loop", "step": round, "run_id": run}, map[string]any{"r": round})
		}
	}
	want := make([]string, 0, len(latest))
	for th := range latest {
		want = append(want, th)
	}
	slices.SortFunc(want, func(a, b string) int { return -cmpStr(latest[a].CheckpointID, latest[b].CheckpointID) })

	for _, limit := range []int{1, 2, 3, 50} {
		var got []string
		before := ""
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatal("no end of the pages")
			}
			var p threadPage
			f.getJSON(t, fmt.Sprintf("/api/threads?limit=%d&before=%s", limit, before), &p)
			for _, r := range p.Threads {
				got = append(got, r.ThreadID)
				if r.Latest.CheckpointID != latest[r.ThreadID].CheckpointID {
					t.Errorf("limit %d: %s latest %s, want %s", limit, r.ThreadID, r.Latest.CheckpointID, latest[r.ThreadID].CheckpointID)
				}
			}
			if p.NextBefore == "" {
				break
			}
			before = p.NextBefore
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: %v, want %v", limit, got, want)
		}
	}

	var p threadPage
	f.getJSON(t, "/api/threads?run_id=run-odd", &p)
	for _, r := range p.Threads {
		if r.Latest.RunID != "run-odd" {
			t.Errorf("run filter: %+v", r)
		}
	}
	if len(p.Threads) != 3 {
		t.Errorf("run filter: %d threads, want 3", len(p.Threads))
	}
	f.getJSON(t, "/api/threads?filter=step=0&filter=source=loop", &p)
	if len(p.Threads) != 7 {
		t.Errorf("step=0: %d threads, want 7", len(p.Threads))
	}
	for _, r := range p.Threads {
		if r.Latest.Step == nil || *r.Latest.Step != 0 {
			t.Errorf("step=0 filter: %+v", r)
		}
	}
	var e apiError
	if code := f.getJSON(t, "/api/threads?filter=nokey", &e); code != http.StatusBadRequest || e.Kind != kindBadRequest {
		t.Errorf("bad filter: %d %+v", code, e)
	}
	var one threadRow
	if code := f.getJSON(t, "/api/threads/t3", &one); code != http.StatusOK || one.Latest.CheckpointID != latest["t3"].CheckpointID {
		t.Errorf("lookup: %d %+v", code, one)
	}
	if code := f.getJSON(t, "/api/threads/nope", &e); code != http.StatusNotFound || e.Kind != kindNotFound {
		t.Errorf("lookup of a missing thread: %d %+v", code, e)
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestDiffAPI(t *testing.T) {
	f := newFixture(t)
	c1 := f.put(t, checkpoint.Config{ThreadID: "d"}, -1, map[string]any{"p": map[string]any{"a": 1, "b": "x"}, "n": 1, "gone": true})
	c2 := f.put(t, c1, 0, map[string]any{"p": map[string]any{"a": 2, "c": []any{1}}, "new": "y"})
	var d diffJSON
	if code := f.getJSON(t, "/api/threads/d/diff?a="+c2.CheckpointID, &d); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if d.A.CheckpointID != c2.CheckpointID || d.B == nil || d.B.CheckpointID != c1.CheckpointID {
		t.Fatalf("a %+v b %+v", d.A, d.B)
	}
	var kinds []string
	for _, c := range d.Changes {
		kinds = append(kinds, c.Channel+":"+c.Kind)
	}
	// c2 keeps c1's versions of n and gone: only p changes, new is added.
	if want := []string{"new:added", "p:changed"}; !slices.Equal(kinds, want) || d.Unchanged != 2 {
		t.Errorf("changes %v (unchanged %d), want %v", kinds, d.Unchanged, want)
	}
	data, _ := json.Marshal(d.Patch)
	if want := `[{"op":"add","path":"/new","value":"y"},{"op":"remove","path":"/p/b"},{"op":"replace","path":"/p/a","value":2},{"op":"add","path":"/p/c","value":[1]}]`; string(data) != want {
		t.Errorf("patch %s, want %s", data, want)
	}
	// A root checkpoint compared with nothing; B given explicitly.
	f.getJSON(t, "/api/threads/d/diff?a="+c1.CheckpointID, &d)
	if d.B != nil || len(d.Changes) != 3 {
		t.Errorf("root: %+v", d)
	}
	f.getJSON(t, "/api/threads/d/diff?a="+c1.CheckpointID+"&b="+c2.CheckpointID, &d)
	if d.B == nil || d.B.CheckpointID != c2.CheckpointID {
		t.Errorf("explicit B: %+v", d.B)
	}
	var e apiError
	if code := f.getJSON(t, "/api/threads/d/diff", &e); code != http.StatusBadRequest {
		t.Errorf("no a: %d", code)
	}
	if code := f.getJSON(t, "/api/threads/d/diff?a=01ARZ3NDEKTSV4RRFFQ69G5FAV", &e); code != http.StatusNotFound {
		t.Errorf("missing a: %d %+v", code, e)
	}
}

func TestInboxAPI(t *testing.T) {
	f := newFixture(t)
	a := f.put(t, checkpoint.Config{ThreadID: "a"}, -1, map[string]any{"x": 1})
	f.interrupt(t, a, "ask", "Continue?")
	b := f.put(t, checkpoint.Config{ThreadID: "b"}, -1, map[string]any{"x": 1})
	f.interrupt(t, b, "ask", "Approve?")
	f.put(t, b, 0, map[string]any{"x": 2}) // resumed
	f.put(t, checkpoint.Config{ThreadID: "c"}, -1, map[string]any{"x": 1})
	var box inboxJSON
	if code := f.getJSON(t, "/api/inbox", &box); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if len(box.Items) != 1 || box.Items[0].ThreadID != "a" || box.Items[0].CheckpointID != a.CheckpointID || box.Scanned != 3 || !box.Complete {
		t.Fatalf("inbox %+v", box)
	}
	it := box.Items[0]
	if v, _ := it.Interrupts[0].Value.(map[string]any); v["value"] != "Continue?" || it.Interrupts[0].TaskID != "ask" {
		t.Errorf("interrupt %+v", it.Interrupts)
	}
	if at, err := time.Parse(time.RFC3339Nano, it.Since); err != nil || time.Since(at) > time.Minute {
		t.Errorf("since %q: %v", it.Since, err)
	}
	f.getJSON(t, "/api/inbox?scan=1", &box)
	if box.Scanned != 1 || box.Complete || len(box.Items) != 0 {
		t.Errorf("scan=1: %+v", box)
	}
}

func TestBranchesAPI(t *testing.T) {
	f := newFixture(t)
	f.put(t, checkpoint.Config{ThreadID: "src"}, -1, map[string]any{"x": 1})
	ctx := context.Background()
	for _, to := range []string{"copy-1", "copy-2"} {
		if err := f.saver.CopyThread(ctx, "src", to); err != nil {
			t.Fatal(err)
		}
	}
	var b branchesJSON
	f.getJSON(t, "/api/threads/src/branches", &b)
	var copies []string
	for _, c := range b.Copies {
		copies = append(copies, c.ThreadID)
	}
	slices.Sort(copies)
	if !slices.Equal(copies, []string{"copy-1", "copy-2"}) || len(b.CopiedFrom) != 0 {
		t.Errorf("src: %+v", b)
	}
	f.getJSON(t, "/api/threads/copy-2/branches", &b)
	if len(b.CopiedFrom) != 1 || b.CopiedFrom[0].ThreadID != "src" || len(b.Copies) != 0 {
		t.Errorf("copy-2: %+v", b)
	}
}

// send makes a request with an optional JSON body and confirmation.
func send(t *testing.T, method, url string, body any, confirm bool) (int, apiError) {
	t.Helper()
	var rd bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&rd).Encode(body)
	}
	req, err := http.NewRequest(method, url, &rd)
	if err != nil {
		t.Fatal(err)
	}
	if confirm {
		req.Header.Set(confirmHeader, "yes")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e
}

func TestWritesAPI(t *testing.T) {
	_, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	ro := serveUI(t, rdb, prefix, false)
	rw := serveUI(t, rdb, prefix, true)
	c1 := ro.put(t, checkpoint.Config{ThreadID: "w"}, -1, map[string]any{"v": 1})
	ro.put(t, c1, 0, map[string]any{"v": 2})
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodDelete, "/api/threads/w", nil},
		{http.MethodPost, "/api/threads/w/prune", nil},
		{http.MethodPost, "/api/threads/w/copy", copyRequest{Target: "w2"}},
	} {
		if code, e := send(t, c.method, ro.ts.URL+c.path, c.body, true); code != http.StatusForbidden || e.Kind != kindForbidden {
			t.Errorf("read-only %s %s: %d %+v", c.method, c.path, code, e)
		}
		if code, _ := send(t, c.method, rw.ts.URL+c.path, c.body, false); code != http.StatusForbidden {
			t.Errorf("unconfirmed %s %s: %d", c.method, c.path, code)
		}
	}
	if n := countCheckpoints(t, ro, "w"); n != 2 {
		t.Fatalf("refused writes changed the thread: %d checkpoints", n)
	}
	if code, e := send(t, http.MethodPost, rw.ts.URL+"/api/threads/w/copy", copyRequest{Target: "w2", At: c1.CheckpointID}, true); code != http.StatusCreated {
		t.Fatalf("copy: %d %+v", code, e)
	}
	fork, err := rw.saver.GetTuple(context.Background(), checkpoint.Config{ThreadID: "w2"})
	if err != nil || fork.ParentConfig.CheckpointID != c1.CheckpointID || fork.Metadata["source"] != "fork" {
		t.Fatalf("fork %+v %v", fork, err)
	}
	if code, _ := send(t, http.MethodPost, rw.ts.URL+"/api/threads/w/copy", copyRequest{Target: "w2"}, true); code != http.StatusConflict {
		t.Errorf("copy onto an existing thread: %d", code)
	}
	if code, _ := send(t, http.MethodPost, rw.ts.URL+"/api/threads/w/copy", map[string]any{"target": "w3", "extra": 1}, true); code != http.StatusBadRequest {
		t.Errorf("unknown field: %d", code)
	}
	if code, _ := send(t, http.MethodPost, rw.ts.URL+"/api/threads/w/prune", nil, true); code != http.StatusOK || countCheckpoints(t, rw, "w") != 1 {
		t.Errorf("prune: %d", code)
	}
	if code, _ := send(t, http.MethodPost, rw.ts.URL+"/api/threads/none/prune", nil, true); code != http.StatusNotFound {
		t.Errorf("prune of a missing thread: %d", code)
	}
	if code, _ := send(t, http.MethodDelete, rw.ts.URL+"/api/threads/w", nil, true); code != http.StatusOK || countCheckpoints(t, rw, "w") != 0 {
		t.Errorf("delete: %d", code)
	}
}

func TestStatusAPI(t *testing.T) {
	_, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	serveUI(t, rdb, prefix, false).put(t, checkpoint.Config{ThreadID: "x"}, -1, map[string]any{"v": 1})
	closed := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { closed.Close() })
	for _, c := range []struct {
		name string
		rdb  redis.UniversalClient
		opts Options
		kind string
	}{
		{"ok", rdb, Options{Prefix: prefix, Shards: 4, AllowWrites: true}, ""},
		{"wrong prefix", rdb, Options{Prefix: prefix + "x", Shards: 4}, kindNoData},
		{"shard mismatch", rdb, Options{Prefix: prefix, Shards: 2}, kindConfig},
		{"unreachable", closed, Options{Prefix: prefix, Shards: 4}, kindUnreachable},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := New(c.rdb, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			f := &fixture{ts: ts}
			var st statusJSON
			f.getJSON(t, "/api/status", &st)
			if st.OK != (c.kind == "") || st.Kind != c.kind || st.AllowWrites != c.opts.AllowWrites || st.Prefix != c.opts.Prefix {
				t.Errorf("status %+v, want kind %q", st, c.kind)
			}
			if c.kind != "" {
				var e apiError
				if code := f.getJSON(t, "/api/threads", &e); code != http.StatusServiceUnavailable || e.Kind != c.kind {
					t.Errorf("threads: %d %+v", code, e)
				}
			}
		})
	}
	// A wrong prefix is not created by looking at it.
	if n := rdb.Exists(context.Background(), prefix+"x:meta").Val(); n != 0 {
		t.Errorf("the UI created the prefix")
	}
	if _, err := New(rdb, Options{Shards: -1}); err == nil {
		t.Error("New accepted Shards -1")
	}
}
