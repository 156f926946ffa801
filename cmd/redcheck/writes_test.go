package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

// saverOf opens the fixture's saver to check what a command wrote.
func saverOf(t *testing.T, f fixture) *redissaver.Saver {
	t.Helper()
	rdb, err := connect(f.url, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: f.prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWritesNeedYes: delete, prune and copy without --yes change nothing
// and exit 2, before connecting; bad arguments are usage errors too.
func TestWritesNeedYes(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		s := saverOf(t, f)
		for _, args := range [][]string{
			f.args("delete", "demo"),
			f.args("prune", "demo"),
			f.args("copy", "demo", "demo-2"),
			f.args("copy", "demo", "demo-2", "--at", f.d2),
			f.args("prune", "demo", "--keep", "3", "--yes"),
			f.args("copy", "demo", "demo", "--yes"),
			f.args("copy", "demo", "--yes"),
			f.args("delete", "--yes"),
			f.args("delete", "", "--yes"),
		} {
			code, out, errs := runArgs(t, args...)
			if code != exitUsage || out != "" {
				t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", args, code, out)
			}
			if !strings.Contains(strings.Join(args, " "), "--yes") && !strings.Contains(errs, "add --yes to confirm") {
				t.Errorf("%q: stderr %q does not ask for --yes", args, errs)
			}
		}
		if n, err := countCheckpoints(context.Background(), s, "demo"); err != nil || n != 5 {
			t.Errorf("demo has %d checkpoints (%v), want 5 untouched", n, err)
		}
		if ok, _ := threadExists(context.Background(), s, "demo-2"); ok {
			t.Error("demo-2 was written")
		}
		// Unreachable Redis: exit 2 even with --yes.
		if code, _, errs := runArgs(t, "delete", "demo", "--yes", "--url", "redis://127.0.0.1:1/0"); code != exitUsage || !strings.Contains(errs, "cannot reach Redis") {
			t.Errorf("unreachable: exit %d, %s", code, errs)
		}
	})
}

func TestDeleteGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		s := saverOf(t, f)
		checkGolden(t, "delete.golden", mustRun(t, 0, f.args("delete", "demo", "--yes")...))
		if ok, _ := threadExists(context.Background(), s, "demo"); ok {
			t.Error("demo still exists")
		}
		var doc deleteDoc
		decodeStrict(t, mustRun(t, 0, f.args("delete", "other", "--yes", "--json")...), &doc)
		if doc != (deleteDoc{ThreadID: "other", Checkpoints: 1}) {
			t.Errorf("--json: %+v", doc)
		}
		for _, args := range [][]string{f.args("delete", "demo", "--yes"), {"delete", "x", "--yes", "--url", f.url, "--prefix", redistest.Prefix(t)}} {
			if code, _, errs := runArgs(t, args...); code != exitFound || !strings.Contains(errs, "not found") {
				t.Errorf("%q: exit %d, %s; want 1, not found", args, code, errs)
			}
		}
		if n, _ := countCheckpoints(context.Background(), s, "quiet"); n != 1 {
			t.Errorf("quiet: %d checkpoints, want 1 (untouched)", n)
		}
	})
}

func TestPruneGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		s := saverOf(t, f)
		checkGolden(t, "prune.golden", mustRun(t, 0, f.args("prune", "demo", "--yes")...))
		ctx := context.Background()
		latest, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "demo"})
		if err != nil || latest.Config.CheckpointID != f.d4 || len(latest.PendingWrites) != 2 {
			t.Fatalf("latest after prune: %+v, %v", latest, err)
		}
		if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "demo", CheckpointID: f.d3}); err == nil {
			t.Error("d3 survived the prune")
		}
		var doc pruneDoc
		decodeStrict(t, mustRun(t, 0, f.args("prune", "demo", "--keep", "1", "--yes", "--json")...), &doc)
		if doc != (pruneDoc{ThreadID: "demo", Keep: 1, Before: 2, After: 2, Removed: 0}) {
			t.Errorf("--json: %+v", doc)
		}
		if code, _, errs := runArgs(t, f.args("prune", "nope", "--yes")...); code != exitFound || !strings.Contains(errs, "not found") {
			t.Errorf("unknown thread: exit %d, %s", code, errs)
		}
	})
}

func TestCopyGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		s := saverOf(t, f)
		ctx := context.Background()
		out := mustRun(t, 0, f.args("copy", "demo", "demo-copy", "--yes")...)
		// --at puts a new checkpoint, whose ID is new each run.
		fork := mustRun(t, 0, f.args("copy", "demo", "demo-fork", "--at", f.d2, "--yes")...)
		newID := regexp.MustCompile(`latest checkpoint (\S+)\n$`).FindStringSubmatch(fork)
		if newID == nil {
			t.Fatalf("fork output %q", fork)
		}
		checkGolden(t, "copy.golden", out+strings.ReplaceAll(fork, newID[1], "<new fork checkpoint>"))

		for _, th := range []string{"demo-copy", "demo-fork"} {
			if n, _ := countCheckpoints(ctx, s, th); n != map[string]int{"demo-copy": 5, "demo-fork": 6}[th] {
				t.Errorf("%s: %d checkpoints", th, n)
			}
		}
		ft, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "demo-fork"})
		if err != nil || ft.Config.CheckpointID != newID[1] || ft.ParentConfig.CheckpointID != f.d2 || ft.Metadata["source"] != "fork" {
			t.Fatalf("fork: %+v %v", ft, err)
		}
		if step, _ := inspect.Step(ft.Metadata); step != 1 {
			t.Errorf("fork step %d, want d2's 0 + 1", step)
		}
		d2, _ := s.GetTuple(ctx, checkpoint.Config{ThreadID: "demo", CheckpointID: f.d2})
		if compactJSON(plain(ft.Checkpoint.ChannelValues)) != compactJSON(plain(d2.Checkpoint.ChannelValues)) {
			t.Errorf("fork values %v, want d2's %v", ft.Checkpoint.ChannelValues, d2.Checkpoint.ChannelValues)
		}

		var doc copyDoc
		decodeStrict(t, mustRun(t, 0, f.args("copy", "other", "other-2", "--yes", "--json")...), &doc)
		if doc != (copyDoc{Source: "other", Target: "other-2", Checkpoints: 1, CheckpointID: f.other}) {
			t.Errorf("--json: %+v", doc)
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{f.args("copy", "demo", "demo-copy", "--yes"), "has checkpoints"},
			{f.args("copy", "nope", "nope-2", "--yes"), "not found"},
			{f.args("copy", "demo", "demo-3", "--at", fixedID(t0, 9), "--yes"), "not found"},
		} {
			if code, _, errs := runArgs(t, c.args...); code != exitFound || !strings.Contains(errs, c.want) {
				t.Errorf("%q: exit %d, %s; want 1, %q", c.args, code, errs, c.want)
			}
		}
		if ok, _ := threadExists(ctx, s, "demo-3"); ok {
			t.Error("a failed fork wrote demo-3")
		}
	})
}

// TestUICommand: "redcheck ui" serves the UI over the target until
// interrupted; read-only unless --allow-writes.
func TestUICommand(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		for _, writes := range []bool{false, true} {
			ctx, cancel := context.WithCancel(context.Background())
			pr, pw := io.Pipe()
			args := f.args("ui", "--addr", "127.0.0.1:0")
			if writes {
				args = append(args, "--allow-writes")
			}
			done := make(chan int, 1)
			go func() { done <- run(ctx, args, pw, io.Discard); pw.Close() }()
			sc := bufio.NewScanner(pr)
			base := ""
			for sc.Scan() {
				if m := regexp.MustCompile(`serving (http://\S+)/ `).FindStringSubmatch(sc.Text()); m != nil {
					base = m[1]
					break
				}
			}
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			if base == "" {
				cancel()
				t.Fatalf("no serving line (exit %d)", <-done)
			}
			resp, err := http.Get(base + "/api/status")
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				OK          bool   `json:"ok"`
				Prefix      string `json:"prefix"`
				AllowWrites bool   `json:"allow_writes"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if !st.OK || st.Prefix != f.prefix || st.AllowWrites != writes {
				t.Errorf("status %+v (writes %v)", st, writes)
			}
			resp, err = http.Get(base + "/api/threads")
			if err != nil {
				t.Fatal(err)
			}
			var page struct {
				Threads []struct {
					ThreadID string `json:"thread_id"`
				} `json:"threads"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if len(page.Threads) != 3 || page.Threads[0].ThreadID != "other" {
				t.Errorf("threads %+v", page)
			}
			cancel()
			select {
			case code := <-done:
				if code != exitOK {
					t.Errorf("exit %d after interrupt", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("redcheck ui did not stop")
			}
		}
	})
}
