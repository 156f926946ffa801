package ui

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestBrowserThreadsLiveAndGap: the thread list, newest first; a thread's
// timeline; checkpoints, writes and new threads written meanwhile appear
// without a reload; a loss of events shows a gap marker.
func TestBrowserThreadsLiveAndGap(t *testing.T) {
	b := newBrowser(t)
	f := newFixture(t)
	cfg := checkpoint.Config{ThreadID: "browser-thread"}
	msgs := []any{map[string]any{"role": "user", "content": "Plan a rainy day in Paris."}}
	var ids []string
	for i := range 2 {
		msgs = append(msgs, map[string]any{"role": "assistant", "content": fmt.Sprintf("step %d", i)})
		cfg = f.put(t, cfg, i-1, map[string]any{"messages": slices.Clone(msgs), "step": i - 1})
		ids = append(ids, cfg.CheckpointID)
	}
	f.put(t, checkpoint.Config{ThreadID: "other-thread"}, -1, map[string]any{"messages": []any{"elsewhere"}})

	b.open(f.ts.URL + "/")
	b.waitFor("two threads, newest first", `[...document.querySelectorAll('#thread-list li')].map((l) => l.dataset.threadId).join() === 'other-thread,browser-thread'`)
	var loadID string
	b.eval("window.redcheckLoadID", &loadID)
	b.click(`#thread-list li[data-thread-id="browser-thread"] button`)
	b.waitFor("the thread's two checkpoints", `document.querySelectorAll('#timeline .cp').length === 2`)

	// Written by the test now: they must appear without a reload.
	for i := 2; i < 5; i++ {
		msgs = append(msgs, map[string]any{"role": "assistant", "content": fmt.Sprintf("live step %d", i)})
		cfg = f.put(t, cfg, i-1, map[string]any{"messages": slices.Clone(msgs), "step": i - 1})
		ids = append(ids, cfg.CheckpointID)
	}
	if err := f.saver.PutWrites(context.Background(), cfg, []checkpoint.Write{{Channel: "messages", Value: "hello from the test"}}, "task-live", ""); err != nil {
		t.Fatal(err)
	}
	f.put(t, checkpoint.Config{ThreadID: "new-thread"}, -1, map[string]any{"messages": []any{"new"}})
	for _, id := range ids[2:] {
		b.waitFor("checkpoint "+id, `document.querySelector('#timeline .cp[data-checkpoint-id="`+id+`"]')`)
	}
	b.waitFor("the writes under the newest checkpoint", `document.querySelector('#timeline .cp[data-checkpoint-id="`+cfg.CheckpointID+`"] .writes li[data-task-id="task-live"]')`)
	b.waitFor("the new thread on top", `document.querySelector('#thread-list li').dataset.threadId === 'new-thread'`)
	var order []string
	b.eval(`[...document.querySelectorAll('#timeline .cp')].map((e) => e.dataset.checkpointId)`, &order)
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(order, want) {
		t.Errorf("timeline %v, want newest first %v", order, want)
	}
	var now string
	b.eval("window.redcheckLoadID", &now)
	if now != loadID {
		t.Errorf("the page was reloaded: load id %q, was %q", now, loadID)
	}

	// The search filters the list; Enter opens a thread by its exact ID.
	b.run("type a search", setValue("#search", "other"))
	b.waitFor("the search's one match", `[...document.querySelectorAll('#thread-list li')].map((l) => l.dataset.threadId).join() === 'other-thread'`)
	b.run("clear the search", setValue("#search", ""))

	// The state of the newest checkpoint.
	b.click(`#timeline .cp[data-checkpoint-id="` + cfg.CheckpointID + `"]`)
	b.waitFor("the state panel", `document.querySelector('#state [data-state-checkpoint-id="`+cfg.CheckpointID+`"]')`)
	text := b.text("#state")
	for _, s := range []string{"live step 4", "hello from the test", ids[3]} {
		if !strings.Contains(text, s) {
			t.Errorf("state panel lacks %q:\n%s", s, text)
		}
	}

	// Events lost in Redis (the thread's shard feed deleted, as a FLUSH or
	// an eviction would): the page marks the gap in the timeline, and what
	// comes after it shows above the marker.
	layout := keys.Of(f.saver)
	f.rdb.Del(context.Background(), layout.Feed(layout.Shard("browser-thread")))
	b.waitFor("a gap marker in the timeline", `(() => { const g = document.querySelector('#timeline .gap');
		return !!g && g.getBoundingClientRect().height > 0 && g.innerText.includes('Events missing') })()`)
	var reason string
	b.eval(`document.querySelector('#timeline .gap').dataset.gapReason`, &reason)
	if reason != "stream_lost" {
		t.Errorf("gap marker reason %q, want stream_lost", reason)
	}
	cfg = f.put(t, cfg, 4, map[string]any{"messages": append(msgs, "after the gap")})
	b.waitFor("the checkpoint after the gap above the marker", `(() => { const t = [...document.querySelectorAll('#timeline > *')];
		return t.length > 1 && t[0].dataset.checkpointId === '`+cfg.CheckpointID+`' && t[1].classList.contains('gap') })()`)
	b.screenshot("timeline")
}

// TestBrowserDiff: the diff of a checkpoint with its parent, and of any two.
func TestBrowserDiff(t *testing.T) {
	b := newBrowser(t)
	f := newFixture(t)
	c1 := f.put(t, checkpoint.Config{ThreadID: "d"}, -1, map[string]any{"profile": map[string]any{"name": "ada", "city": "London"}, "count": 1})
	c2 := f.put(t, c1, 0, map[string]any{"profile": map[string]any{"name": "ada lovelace", "city": "London", "born": 1815}})
	c3 := f.put(t, c2, 1, map[string]any{"count": 3, "notes": []any{"x"}})
	b.open(f.ts.URL + "/#thread=d")
	b.waitFor("three checkpoints", `document.querySelectorAll('#timeline .cp').length === 3`)
	b.click(`#timeline .cp[data-checkpoint-id="` + c2.CheckpointID + `"]`)
	b.waitFor("the state", `document.querySelector('#state [data-state-checkpoint-id="`+c2.CheckpointID+`"]')`)
	b.click(`#state .state-actions button`) // Diff with parent
	b.waitFor("the diff with the parent", `document.querySelector('#diff .change[data-channel="profile"][data-kind="changed"]')`)
	var ops []string
	b.eval(`[...document.querySelectorAll('#diff .change[data-channel="profile"] li')].map((l) => l.dataset.op + ' ' + l.dataset.path)`, &ops)
	if want := []string{"add /born", "replace /name"}; !slices.Equal(ops, want) {
		t.Errorf("profile ops %v, want %v", ops, want)
	}
	if s := b.text("#diff-summary"); s != "1 channels changed, 1 unchanged" {
		t.Errorf("summary %q", s)
	}

	// Any two: from c1 to c3.
	b.run("pick c1 and c3", setValue("#diff-b", c1.CheckpointID), setValue("#diff-a", c3.CheckpointID))
	b.click(`#diff-form button[type="submit"]`)
	b.waitFor("the diff c1 → c3", `document.querySelector('#diff .change[data-channel="notes"][data-kind="added"]')`)
	var kinds []string
	b.eval(`[...document.querySelectorAll('#diff .change')].map((c) => c.dataset.channel + ':' + c.dataset.kind)`, &kinds)
	if want := []string{"count:changed", "notes:added", "profile:changed"}; !slices.Equal(kinds, want) {
		t.Errorf("changes %v, want %v", kinds, want)
	}
	b.screenshot("diff")
}

// TestBrowserInterruptInbox: threads waiting on interrupt() are listed with
// their question and since when; a new one arrives live; a resumed one
// leaves.
func TestBrowserInterruptInbox(t *testing.T) {
	b := newBrowser(t)
	f := newFixture(t)
	a := f.put(t, checkpoint.Config{ThreadID: "refunds"}, -1, map[string]any{"order": 4512})
	f.interrupt(t, a, "approve", "Approve the refund of €49.90?")
	f.put(t, checkpoint.Config{ThreadID: "busy"}, -1, map[string]any{"x": 1})
	b.open(f.ts.URL + "/")
	b.click("#tab-inbox")
	b.waitFor("the waiting thread", `document.querySelector('#inbox-list li[data-thread-id="refunds"]')`)
	text := b.text(`#inbox-list li[data-thread-id="refunds"]`)
	if !strings.Contains(text, "Approve the refund of €49.90?") || !strings.Contains(text, "waiting since") {
		t.Errorf("inbox entry %q", text)
	}
	// Live: another thread stops on an interrupt.
	c := f.put(t, checkpoint.Config{ThreadID: "deploys"}, -1, map[string]any{"env": "prod"})
	f.interrupt(t, c, "confirm", "Deploy to prod?")
	b.waitFor("the new waiting thread", `document.querySelector('#inbox-list li[data-thread-id="deploys"]') && document.querySelector('#inbox-count').textContent === '2'`)
	// Resumed: a new checkpoint on top of the interrupted one.
	f.put(t, a, 0, map[string]any{"approved": true})
	b.waitFor("the resumed thread gone", `!document.querySelector('#inbox-list li[data-thread-id="refunds"]') && document.querySelector('#inbox-count').textContent === '1'`)
	b.screenshot("inbox")
	b.click(`#inbox-list li[data-thread-id="deploys"] button`)
	b.waitFor("the thread's timeline with the interrupt", `document.querySelector('#timeline .writes li.interrupt')`)

	// The keyboard: the arrow keys move along the thread list, Enter
	// opens a thread, and in the timeline Enter shows a checkpoint.
	b.click("#tab-threads")
	b.eval(`document.querySelector('#thread-list li button').focus()`, nil)
	var first, second string
	b.eval(`[...document.querySelectorAll('#thread-list li')].map((l) => l.dataset.threadId)[1]`, &second)
	b.eval(`document.activeElement.closest('li').dataset.threadId`, &first)
	b.run("arrow down, Enter", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
	b.waitFor("the second thread opened by keyboard", `document.querySelector('#thread-title').textContent === '`+second+`' && document.querySelector('#timeline .cp')`)
	if first == second {
		t.Fatalf("focus did not move: %q", first)
	}
	b.eval(`document.querySelector('#timeline .cp').focus()`, nil)
	b.run("Enter on a checkpoint", chromedp.KeyEvent(kb.Enter))
	b.waitFor("its state", `document.querySelector('#state [data-state-checkpoint-id]')`)
	// Every form field has a label.
	var unlabelled []string
	b.eval(`[...document.querySelectorAll('input, select')].filter((e) => !e.labels || e.labels.length === 0).map((e) => e.id)`, &unlabelled)
	if len(unlabelled) != 0 {
		t.Errorf("fields without a label: %v", unlabelled)
	}
}

// TestBrowserBranchTree: a checkpoint with two children shows as a fork
// point with nested branches; a copy of the thread is linked both ways.
func TestBrowserBranchTree(t *testing.T) {
	b := newBrowser(t)
	f := newFixture(t)
	c1 := f.put(t, checkpoint.Config{ThreadID: "tree"}, -1, map[string]any{"v": 1})
	c2 := f.put(t, c1, 0, map[string]any{"v": 2})
	f.put(t, c2, 1, map[string]any{"v": 3})
	alt := f.putMD(t, c1, checkpoint.Metadata{"source": "fork", "step": 0}, map[string]any{"v": 20}) // time travel: a second child of c1
	if err := f.saver.CopyThread(context.Background(), "tree", "tree-copy"); err != nil {
		t.Fatal(err)
	}
	b.open(f.ts.URL + "/#thread=tree")
	b.click("#tab-branches")
	b.waitFor("the fork point", `document.querySelector('#tree .node.fork-point[data-checkpoint-id="`+c1.CheckpointID+`"]')`)
	var branches int
	b.eval(`document.querySelectorAll('#tree li.branch').length`, &branches)
	if branches != 2 {
		t.Errorf("%d branches, want 2", branches)
	}
	b.waitFor("the fork in its branch", `document.querySelector('#tree li.branch .node[data-checkpoint-id="`+alt.CheckpointID+`"]')`)
	b.waitFor("the copy", `document.querySelector('#copied-to a[data-thread-id="tree-copy"]')`)
	b.screenshot("branches")
	b.click(`#copied-to a[data-thread-id="tree-copy"]`)
	b.waitFor("the copy's origin", `document.querySelector('#copied-from a[data-thread-id="tree"]')`)
}

// TestBrowserWrites: without --allow-writes the page shows no write action
// and the server refuses one (403); with it, fork, prune and delete work,
// each after a confirmation.
func TestBrowserWrites(t *testing.T) {
	b := newBrowser(t)
	_, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	ro := serveUI(t, rdb, prefix, false)
	c1 := ro.put(t, checkpoint.Config{ThreadID: "w"}, -1, map[string]any{"v": 1})
	c2 := ro.put(t, c1, 0, map[string]any{"v": 2})
	ro.put(t, c2, 1, map[string]any{"v": 3})

	b.open(ro.ts.URL + "/#thread=w")
	b.waitFor("the timeline", `document.querySelectorAll('#timeline .cp').length === 3`)
	var visible int
	b.eval(`[...document.querySelectorAll('.write')].filter((e) => e.offsetParent !== null).length`, &visible)
	if visible != 0 {
		t.Errorf("%d write controls visible read-only", visible)
	}
	if m := b.text("#mode"); m != "read-only" {
		t.Errorf("mode %q", m)
	}
	var status int
	b.eval(`fetch('api/threads/w', {method: 'DELETE', headers: {'X-Redcheck-Confirm': 'yes'}}).then((r) => r.status)`, &status)
	if status != http.StatusForbidden {
		t.Errorf("DELETE read-only: %d, want 403", status)
	}
	b.screenshot("read-only")
	if _, err := ro.saver.GetTuple(context.Background(), checkpoint.Config{ThreadID: "w"}); err != nil {
		t.Fatalf("the thread went: %v", err)
	}

	// The same prefix with writes allowed.
	rw := serveUI(t, rdb, prefix, true)
	b.open(rw.ts.URL + "/#thread=w")
	b.waitFor("the timeline", `document.querySelectorAll('#timeline .cp').length === 3`)
	// Without the confirmation header (another site's form, say): refused.
	b.eval(`fetch('api/threads/w', {method: 'DELETE'}).then((r) => r.status)`, &status)
	if status != http.StatusForbidden {
		t.Errorf("DELETE without confirmation: %d, want 403", status)
	}

	// Fork at c2, confirmed in the dialog.
	b.click(`#timeline .cp[data-checkpoint-id="` + c2.CheckpointID + `"]`)
	b.waitFor("the fork button", `document.querySelector('#fork')`)
	b.click("#fork")
	b.waitFor("the dialog", `document.querySelector('#confirm').open`)
	b.run("name the fork", setValue("#confirm-input", "w-fork"))
	b.screenshot("confirm-fork")
	b.run("Enter in the field confirms", chromedp.Focus("#confirm-input", chromedp.ByQuery), chromedp.KeyEvent(kb.Enter))
	b.waitFor("the fork selected", `document.querySelector('#thread-title').textContent === 'w-fork' && document.querySelectorAll('#timeline .cp').length === 4`)
	fork, err := rw.saver.GetTuple(context.Background(), checkpoint.Config{ThreadID: "w-fork"})
	if err != nil || fork.ParentConfig == nil || fork.ParentConfig.CheckpointID != c2.CheckpointID || fork.Metadata["source"] != "fork" ||
		fmt.Sprint(fork.Checkpoint.ChannelValues["v"]) != "2" {
		t.Fatalf("fork: %+v, %v", fork, err)
	}

	// Cancel changes nothing; prune keeps the latest.
	b.click("#prune")
	b.waitFor("the dialog", `document.querySelector('#confirm').open`)
	b.click("#confirm-cancel")
	time.Sleep(200 * time.Millisecond)
	if n := countCheckpoints(t, rw, "w-fork"); n != 4 {
		t.Fatalf("cancelled prune: %d checkpoints, want 4", n)
	}
	b.click("#prune")
	b.waitFor("the dialog", `document.querySelector('#confirm').open`)
	b.click("#confirm-ok")
	b.waitFor("one checkpoint left", `document.querySelectorAll('#timeline .cp').length === 1`)

	// Delete.
	b.click("#delete")
	b.waitFor("the dialog", `document.querySelector('#confirm').open`)
	b.click("#confirm-ok")
	b.waitFor("the thread gone from the list", `!document.querySelector('#thread-list li[data-thread-id="w-fork"]') && document.querySelectorAll('#timeline .cp').length === 0`)
	if _, err := rw.saver.GetTuple(context.Background(), checkpoint.Config{ThreadID: "w-fork"}); err == nil {
		t.Error("w-fork still exists")
	}
}

// countCheckpoints counts a thread's checkpoints, every namespace.
func countCheckpoints(t *testing.T, f *fixture, thread string) int {
	n := 0
	for _, err := range f.saver.List(context.Background(), checkpoint.ListQuery{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestBrowserErrors: the page says what is wrong: a prefix without data, a
// shard count that does not match, an unreachable Redis, lost data.
func TestBrowserErrors(t *testing.T) {
	b := newBrowser(t)
	_, rdb := redistest.Mini(t)
	written := redistest.Prefix(t)
	serveUI(t, rdb, written, false).put(t, checkpoint.Config{ThreadID: "x"}, -1, map[string]any{"v": 1})
	// A thread whose head key was lost (as an eviction would): its reads
	// are checkpoint.ErrDataLoss.
	lossy := redistest.Prefix(t)
	lf := serveUI(t, rdb, lossy, false)
	lf.put(t, checkpoint.Config{ThreadID: "lost"}, -1, map[string]any{"v": 1})
	rdb.Del(context.Background(), keys.Of(lf.saver).Head("lost"))
	closed := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { closed.Close() })
	for _, c := range []struct {
		name   string
		rdb    redis.UniversalClient
		opts   Options
		kind   string
		banner string
	}{
		{"wrong-prefix", rdb, Options{Prefix: written + "-typo", Shards: 4}, "no_data", "No redcheck data under this prefix"},
		{"shard-mismatch", rdb, Options{Prefix: written, Shards: 8}, "config", "check --shards"},
		{"unreachable", closed, Options{Prefix: written, Shards: 4}, "unreachable", "Cannot reach Redis"},
		{"data-loss", rdb, Options{Prefix: lossy, Shards: 4}, "data_loss", "Data loss"},
	} {
		c.opts.Logger = log.New(io.Discard, "", 0)
		srv, err := New(c.rdb, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		b.run("navigate", chromedpNavigate(ts.URL+"/#thread=lost"))
		b.waitFor(c.name+" banner", `(() => { const e = document.querySelector('#banner'); return !e.hidden && e.dataset.kind === '`+c.kind+`' })()`)
		if s := b.text("#banner"); !strings.Contains(s, c.banner) {
			t.Errorf("%s: banner %q lacks %q", c.name, s, c.banner)
		}
		b.screenshot(c.name)
		ts.CloseClientConnections()
		ts.Close()
	}
}
