package ui

import (
	"context"
	"github.com/graphstate/redcheck/internal/keys"
	"io"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/stream"
)

func TestPageIsServed(t *testing.T) {
	f := newFixture(t)
	for path, want := range map[string]string{"/": `id="timeline"`, "/app.js": "EventSource", "/style.css": "#timeline"} {
		resp, err := http.Get(f.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %s, body without %q", path, resp.Status, want)
		}
	}
}

func TestThreadsAPI(t *testing.T) {
	f := newFixture(t)
	latestA := checkpoint.Config{ThreadID: "a"}
	for i := range 3 {
		latestA = f.put(t, latestA, i, map[string]any{"step": i})
	}
	b := f.put(t, checkpoint.Config{ThreadID: "b"}, 0, map[string]any{"step": 0})

	var page threadPage
	if code := f.getJSON(t, "/api/threads", &page); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	got := page.Threads
	if len(got) != 2 || got[0].ThreadID != "b" || got[1].ThreadID != "a" || page.NextBefore != "" {
		t.Fatalf("threads %+v, want b then a (newest first)", page)
	}
	got[0], got[1] = got[1], got[0]
	if got[0].Latest.CheckpointID != latestA.CheckpointID || *got[0].Latest.Step != 2 || got[1].Latest.CheckpointID != b.CheckpointID {
		t.Errorf("latest checkpoints %+v", got)
	}
}

func TestCheckpointsAPI(t *testing.T) {
	f := newFixture(t)
	cfg := checkpoint.Config{ThreadID: "th/1 with spaces"}
	var ids []string
	for i := range 5 {
		values := map[string]any{"step": i}
		if i%2 == 0 {
			values["messages"] = []any{"m" + string(rune('0'+i))}
		}
		cfg = f.put(t, cfg, i, values)
		ids = append(ids, cfg.CheckpointID)
		if i == 3 {
			if err := f.saver.PutWrites(context.Background(), cfg, []checkpoint.Write{{Channel: "messages", Value: "w"}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := "/api/threads/" + strings.ReplaceAll("th%2F1 with spaces", " ", "%20") + "/checkpoints"

	var p1, p2, p3 checkpointPage
	f.getJSON(t, base+"?limit=2", &p1)
	f.getJSON(t, base+"?limit=2&before="+p1.NextBefore, &p2)
	f.getJSON(t, base+"?limit=2&before="+p2.NextBefore, &p3)
	var order []string
	for _, p := range []checkpointPage{p1, p2, p3} {
		for _, r := range p.Checkpoints {
			order = append(order, r.CheckpointID)
		}
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(order, want) || p3.NextBefore != "" {
		t.Fatalf("pages %v (last next_before %q), want %v", order, p3.NextBefore, want)
	}
	rows := map[string]checkpointRow{}
	for _, p := range []checkpointPage{p1, p2, p3} {
		for _, r := range p.Checkpoints {
			rows[r.CheckpointID] = r
		}
	}
	// Channels changed, from the parent's versions (the root: all of them);
	// the last row of a page finds its parent in the extra checkpoint read.
	wantChannels := [][]string{{"messages", "step"}, {"step"}, {"messages", "step"}, {"step"}, {"messages", "step"}}
	for i, id := range ids {
		r := rows[id]
		if !slices.Equal(r.Channels, wantChannels[i]) || r.Step == nil || *r.Step != int64(i) || r.ThreadID != "th/1 with spaces" {
			t.Errorf("row %d: %+v, want channels %v", i, r, wantChannels[i])
		}
	}
	if w := rows[ids[3]].Writes; !reflect.DeepEqual(w, []stream.WriteJSON{{TaskID: "task-1", Channel: "messages"}}) {
		t.Errorf("writes of step 3: %+v", w)
	}
	if rows[ids[0]].Source != "input" || rows[ids[1]].ParentID != ids[0] {
		t.Errorf("rows 0, 1: %+v %+v", rows[ids[0]], rows[ids[1]])
	}

	var empty checkpointPage
	if code := f.getJSON(t, "/api/threads/nobody/checkpoints", &empty); code != http.StatusOK || len(empty.Checkpoints) != 0 {
		t.Errorf("unknown thread: %d %+v", code, empty)
	}
	for _, q := range []string{"?limit=0", "?limit=x", "?limit=501"} {
		var e apiError
		if code := f.getJSON(t, base+q, &e); code != http.StatusBadRequest || e.Error == "" {
			t.Errorf("%s: %d %+v, want 400 with an error", q, code, e)
		}
	}
}

func TestCheckpointStateAPI(t *testing.T) {
	f := newFixture(t)
	root := f.put(t, checkpoint.Config{ThreadID: "s"}, 0, map[string]any{"x": 1})
	when := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	cfg := f.put(t, root, 1, map[string]any{
		"blob":     []byte{1, 2},
		"nan":      math.NaN(),
		"inf":      math.Inf(-1),
		"when":     when,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}},
	})
	if err := f.saver.PutWrites(context.Background(), cfg, []checkpoint.Write{{Channel: "out", Value: []byte("raw")}}, "t1", ""); err != nil {
		t.Fatal(err)
	}
	var got stateJSON
	if code := f.getJSON(t, "/api/threads/s/checkpoints/"+cfg.CheckpointID+"?ns=", &got); code != http.StatusOK {
		t.Fatalf("status %d: %+v", code, got)
	}
	vals := got.ChannelValues
	if !reflect.DeepEqual(vals["blob"], map[string]any{"$bytes": "AQI="}) || vals["nan"] != "NaN" || vals["inf"] != "-Inf" ||
		vals["when"] != "2024-05-01T12:00:00Z" || vals["x"] != float64(1) {
		t.Errorf("channel values %#v", vals)
	}
	if got.Parent == nil || got.Parent.CheckpointID != root.CheckpointID || got.Metadata["step"] != float64(1) || len(got.ChannelVersions) != 6 {
		t.Errorf("state %+v", got)
	}
	if len(got.PendingWrites) != 1 || got.PendingWrites[0].TaskID != "t1" ||
		!reflect.DeepEqual(got.PendingWrites[0].Value, map[string]any{"$bytes": "cmF3"}) {
		t.Errorf("pending writes %+v", got.PendingWrites)
	}

	var e apiError
	if code := f.getJSON(t, "/api/threads/s/checkpoints/01NOSUCHCHECKPOINT", &e); code != http.StatusNotFound {
		t.Errorf("unknown checkpoint: %d %+v", code, e)
	}
	if code := f.getJSON(t, "/api/threads/s/checkpoints/"+cfg.CheckpointID+"?ns=other", &e); code != http.StatusNotFound {
		t.Errorf("other namespace: %d %+v", code, e)
	}
	long := strings.Repeat("x", 5000)
	if code := f.getJSON(t, "/api/threads/"+long+"/checkpoints/"+cfg.CheckpointID, &e); code != http.StatusBadRequest {
		t.Errorf("over-long thread: %d %+v", code, e)
	}
}

func TestEventsLive(t *testing.T) {
	f := newFixture(t)
	es, _ := f.openEvents(t, "/api/events", "")
	if id := es.ready(t); f.srv.sub.CheckQuery(stream.Query{From: id}) != nil {
		t.Fatalf("ready id %q, want a cursor of every thread", id)
	}
	cfg := f.put(t, checkpoint.Config{ThreadID: "live"}, 7, map[string]any{"messages": []any{"hi"}})
	_, ev := es.nextEvent(t)
	if ev.Type != "checkpoint" || ev.ThreadID != "live" || ev.CheckpointID != cfg.CheckpointID || ev.Step == nil || *ev.Step != 7 ||
		ev.Source != "input" || !slices.Equal(ev.Channels, []string{"messages"}) {
		t.Fatalf("event %+v", ev)
	}
	if err := f.saver.PutWrites(context.Background(), cfg, []checkpoint.Write{{Channel: "out", Value: 1}}, "task-9", ""); err != nil {
		t.Fatal(err)
	}
	_, ev = es.nextEvent(t)
	if ev.Type != "writes" || ev.CheckpointID != cfg.CheckpointID || ev.TaskID != "task-9" || !slices.Equal(ev.Channels, []string{"out"}) {
		t.Fatalf("writes event %+v", ev)
	}
	if err := f.saver.DeleteThread(context.Background(), "live"); err != nil {
		t.Fatal(err)
	}
	if _, ev = es.nextEvent(t); ev.Type != "thread_deleted" || ev.ThreadID != "live" {
		t.Fatalf("delete event %+v", ev)
	}
}

func TestEventsResume(t *testing.T) {
	f := newFixture(t)
	es, _ := f.openEvents(t, "/api/events", "")
	readyID := es.ready(t)
	c1 := f.put(t, checkpoint.Config{ThreadID: "r"}, 1, map[string]any{"s": 1})
	m1, _ := es.nextEvent(t)
	es.close()

	// Written while disconnected: the resumed stream starts with them.
	c2 := f.put(t, c1, 2, map[string]any{"s": 2})
	c3 := f.put(t, checkpoint.Config{ThreadID: "other"}, 3, map[string]any{"s": 3})
	es2, _ := f.openEvents(t, "/api/events", m1.id)
	if id := es2.ready(t); id != m1.id {
		t.Errorf("resumed ready id %q, want the Last-Event-ID %q", id, m1.id)
	}
	var got []string
	for range 2 {
		_, ev := es2.nextEvent(t)
		got = append(got, ev.CheckpointID)
	}
	if !slices.Equal(got, []string{c2.CheckpointID, c3.CheckpointID}) {
		t.Fatalf("resumed with %v, want %v, %v (and not %v)", got, c2.CheckpointID, c3.CheckpointID, c1.CheckpointID)
	}

	// A reconnection before any event resumes from the ready event's cursor.
	es3, _ := f.openEvents(t, "/api/events", readyID)
	es3.ready(t)
	seen := map[string]bool{}
	for range 3 {
		_, ev := es3.nextEvent(t)
		seen[ev.CheckpointID] = true
	}
	if !seen[c1.CheckpointID] || !seen[c2.CheckpointID] || !seen[c3.CheckpointID] {
		t.Fatalf("resumed from %q: saw %v", readyID, seen)
	}

	// One thread: its cursor has one position.
	es4, _ := f.openEvents(t, "/api/events?thread=r&from=beginning", "")
	es4.ready(t)
	m, ev := es4.nextEvent(t)
	if ev.CheckpointID != c1.CheckpointID || strings.Contains(m.id, ",") {
		t.Fatalf("thread r from the beginning: %+v", ev)
	}
	es4.close()
	es5, _ := f.openEvents(t, "/api/events?thread=r", m.id)
	es5.ready(t)
	if _, ev := es5.nextEvent(t); ev.CheckpointID != c2.CheckpointID {
		t.Fatalf("thread r resumed: %+v, want %s", ev, c2.CheckpointID)
	}
}

func TestEventsBadRequests(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ path, lastID string }{
		{"/api/events", "garbage"},
		{"/api/events", "1-0"}, // one position, but 4 shards
		{"/api/events?thread=a", "1-0,2-0"},
		{"/api/events?thread=a", "1-0~nothex00"}, // a mark that no event's cursor has
		{"/api/events", "t:x"},
		{"/api/events?thread=" + strings.Repeat("x", 5000), ""},
	} {
		_, resp := f.openEvents(t, c.path, c.lastID)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s with Last-Event-ID %q: %s, want 400", c.path[:min(len(c.path), 40)], c.lastID, resp.Status)
		}
	}
}

func TestEventsHeartbeat(t *testing.T) {
	f := newFixture(t)
	f.srv.heartbeat = 20 * time.Millisecond
	es, resp := f.openEvents(t, "/api/events", "")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	es.ready(t)
	select {
	case c := <-es.comments:
		if c != "heartbeat" {
			t.Errorf("comment %q", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}
}

// TestEventsGap: an event stream resumed from a position Redis trimmed away
// sends a gap message (type "gap", resumable id) before the events left.
func TestEventsGap(t *testing.T) {
	f := newFixture(t)
	cfg := checkpoint.Config{ThreadID: "g"}
	var ids []string
	for i := range 3 {
		cfg = f.put(t, cfg, i, map[string]any{"x": i})
		ids = append(ids, cfg.CheckpointID)
	}
	ctx := context.Background()
	key := keys.Of(f.saver).Events("g")
	first := f.rdb.XRangeN(ctx, key, "-", "+", 1).Val()[0].ID
	f.rdb.XTrimMaxLen(ctx, key, 1)
	es, _ := f.openEvents(t, "/api/events?thread=g", first)
	es.ready(t)
	m, ev := es.nextEvent(t)
	if ev.Type != stream.TypeGap || ev.Gap == nil || ev.Gap.Reason != stream.GapTrimmed || ev.Gap.From != first || ev.Gap.Stream != key || m.id != first {
		t.Fatalf("first message %+v: %+v, want a gap after %s", m, ev.Gap, first)
	}
	if _, ev = es.nextEvent(t); ev.CheckpointID != ids[2] {
		t.Errorf("after the gap got %s, want %s", describe(ev), ids[2])
	}
}
