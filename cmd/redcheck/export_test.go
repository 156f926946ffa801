package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// saverAt opens a saver of prefix (4 shards) with the default serializer.
func saverAt(t *testing.T, rdb redis.UniversalClient, prefix string) *redissaver.Saver {
	t.Helper()
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// deltaThread adds thread "d" to prefix: a delta channel "log" (a
// DeltaSnapshot seed, then versions without a value and writes to it), and
// pending writes whose indices and task paths PutWrites makes in several
// ways: a special channel before regular writes (a gap at index 0), a
// special channel overwritten with another task path, and a task whose
// writes came from two calls with different task paths.
func deltaThread(t *testing.T, rdb redis.UniversalClient, prefix string) {
	t.Helper()
	ctx := context.Background()
	s := saverAt(t, rdb, prefix)
	cfg := checkpoint.Root("d", "")
	for i, v := range []string{"1", "2", "3"} {
		values := map[string]any{"n": i}
		if i == 0 {
			values["log"] = checkpoint.DeltaSnapshot{Value: []any{"a"}}
		}
		cp := checkpoint.Checkpoint{V: 4, ID: fixedID(t0.Add(time.Duration(i)*time.Second), byte(10+i)), TS: "ts-" + v,
			ChannelValues: values, ChannelVersions: map[string]string{"log": v, "n": v},
			VersionsSeen: map[string]map[string]string{"node": {"log": v}}, UpdatedChannels: []string{"log"}}
		if i == 1 {
			cp.UpdatedChannels = nil
		}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i, "source": "loop", "run_id": "run-d", "score": 0.5}, map[string]string{"log": v, "n": v}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "log", Value: string(rune('b' + i))}}, "task", "p/0"); err != nil {
				t.Fatal(err)
			}
		}
	}
	puts := []struct {
		task, path string
		writes     []checkpoint.Write
	}{
		{"task-a", "path/a", []checkpoint.Write{{Channel: checkpoint.InterruptChannel, Value: "why?"}, {Channel: "x", Value: 1}, {Channel: "y", Value: []byte{7}}}},
		{"task-a", "path/b", []checkpoint.Write{{Channel: checkpoint.ErrorChannel, Value: "boom"}, {Channel: checkpoint.InterruptChannel, Value: "why now?"}}},
		{"task-b", "p1", []checkpoint.Write{{Channel: "p", Value: nil}}},
		{"task-b", "p2", []checkpoint.Write{{Channel: "q0", Value: "dropped"}, {Channel: "q1", Value: map[string]any{"k": "v"}}}},
	}
	for _, p := range puts {
		if err := s.PutWrites(ctx, cfg, p.writes, p.task, p.path); err != nil {
			t.Fatal(err)
		}
	}
}

// exportFile runs export with args and writes its output to a file of the
// test's directory.
func exportFile(t *testing.T, name string, args ...string) (path, out string) {
	t.Helper()
	out = mustRun(t, 0, args...)
	path = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, out
}

// argsAt is f.args for another prefix.
func argsAt(f fixture, prefix, cmd string, rest ...string) []string {
	g := f
	g.prefix = prefix
	return g.args(cmd, rest...)
}

// sameThreads compares what two prefixes' savers read of every thread of
// the fixture: List of every namespace, GetTuple of each checkpoint, and the
// delta channel's history.
func sameThreads(t *testing.T, rdb redis.UniversalClient, a, b string) {
	t.Helper()
	ctx := context.Background()
	sa, sb := saverAt(t, rdb, a), saverAt(t, rdb, b)
	list := func(s *redissaver.Saver, th string) []*checkpoint.Tuple {
		var out []*checkpoint.Tuple
		for tu, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tu)
		}
		return out
	}
	for _, th := range []string{"demo", "other", "quiet", "d"} {
		la, lb := list(sa, th), list(sb, th)
		if len(la) == 0 || !reflect.DeepEqual(la, lb) {
			t.Fatalf("thread %s: List differs:\n%+v\n%+v", th, la, lb)
		}
		for _, tu := range la {
			ga, errA := sa.GetTuple(ctx, tu.Config)
			gb, errB := sb.GetTuple(ctx, tu.Config)
			if errA != nil || errB != nil || !reflect.DeepEqual(ga, gb) {
				t.Errorf("GetTuple %+v: %v %v\n%+v\n%+v", tu.Config, errA, errB, ga, gb)
			}
		}
	}
	ha, errA := sa.DeltaChannelHistory(ctx, checkpoint.Root("d", ""), []string{"log"})
	hb, errB := sb.DeltaChannelHistory(ctx, checkpoint.Root("d", ""), []string{"log"})
	if errA != nil || errB != nil || !reflect.DeepEqual(ha, hb) || !ha["log"].HasSeed || len(ha["log"].Writes) != 2 {
		t.Errorf("DeltaChannelHistory: %v %v\n%+v\n%+v", errA, errB, ha, hb)
	}
}

// sameHashes compares the stored checkpoint hashes of thread "d" in two
// prefixes field by field, but for the call tokens and the run key (which
// names the prefix).
func sameHashes(t *testing.T, rdb redis.UniversalClient, a, b string) {
	t.Helper()
	ctx := context.Background()
	read := func(prefix string) map[string]map[string]string {
		l := keys.Of(saverAt(t, rdb, prefix))
		gen := genOf(t, rdb, l, "d")
		ids, err := rdb.ZRange(ctx, l.Index("d", gen, ""), 0, -1).Result()
		if err != nil || len(ids) != 3 {
			t.Fatalf("index: %v %v", ids, err)
		}
		out := map[string]map[string]string{}
		for _, id := range ids {
			h, err := rdb.HGetAll(ctx, l.Checkpoint("d", gen, "", id)).Result()
			if err != nil {
				t.Fatal(err)
			}
			delete(h, "o")
			delete(h, "ow")
			delete(h, "r")
			out[id] = h
		}
		blobs, err := rdb.HGetAll(ctx, l.Blobs("d", gen, "")).Result()
		if err != nil {
			t.Fatal(err)
		}
		out["blobs"] = blobs
		return out
	}
	if ha, hb := read(a), read(b); !reflect.DeepEqual(ha, hb) {
		t.Errorf("stored hashes differ:\n%q\n%q", ha, hb)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		rdb := redisOf(t, f)
		deltaThread(t, rdb, f.prefix)
		file, out := exportFile(t, "all.jsonl", f.args("export", "--all")...)
		if n := strings.Count(out, "\n"); n != 1+4+1+1+1+3+1 {
			t.Fatalf("export --all: %d lines:\n%s", n, out)
		}

		// Into another prefix: the same export, the same reads, check passes.
		p2 := redistest.Prefix(t)
		if got := mustRun(t, 0, argsAt(f, p2, "import", file)...); got != "imported 4 threads, 10 checkpoints, 10 pending writes\n" {
			t.Errorf("import: %q", got)
		}
		if again := mustRun(t, 0, argsAt(f, p2, "export", "--all")...); again != out {
			t.Fatalf("export after import differs:\n%s\nwant\n%s", again, out)
		}
		if got := mustRun(t, 0, argsAt(f, p2, "check")...); !strings.Contains(got, ": 0 violations, 0 notes") {
			t.Errorf("check after import:\n%s", got)
		}
		sameThreads(t, rdb, f.prefix, p2)
		sameHashes(t, rdb, f.prefix, p2)

		// Again: refused, nothing changed.
		code, _, errs := runArgs(t, argsAt(f, p2, "import", file)...)
		if code != exitFound || !strings.Contains(errs, `4 of the file's threads exist already: d demo other quiet`) {
			t.Errorf("second import: exit %d, %s", code, errs)
		}
		// --replace: the same state again.
		if got := mustRun(t, 0, argsAt(f, p2, "import", "--replace", file)...); !strings.Contains(got, "(4 threads replaced)") {
			t.Errorf("import --replace: %q", got)
		}
		if again := mustRun(t, 0, argsAt(f, p2, "export", "--all")...); again != out {
			t.Fatalf("export after import --replace differs:\n%s\nwant\n%s", again, out)
		}
		sameHashes(t, rdb, f.prefix, p2)

		// In place, after DeleteThread; and compressed, which reads the same.
		one, outD := exportFile(t, "d.jsonl", f.args("export", "d")...)
		if err := saverAt(t, rdb, f.prefix).DeleteThread(context.Background(), "d"); err != nil {
			t.Fatal(err)
		}
		mustRun(t, 0, f.args("import", "--compress", one)...)
		if again := mustRun(t, 0, f.args("export", "d")...); again != outD {
			t.Fatalf("export after a compressed import differs:\n%s\nwant\n%s", again, outD)
		}
		mustRun(t, 0, f.args("import", "--replace", one)...)
		sameHashes(t, rdb, f.prefix, p2)

		// One namespace; several threads named.
		sub := mustRun(t, 0, f.args("export", "demo", "--ns", "child:1")...)
		if n := strings.Count(sub, "\n"); n != 3 || !strings.Contains(sub, f.sub) {
			t.Errorf("export --ns child:1:\n%s", sub)
		}
		two := mustRun(t, 0, f.args("export", "other", "quiet")...)
		if n := strings.Count(two, "\n"); n != 4 || strings.Index(two, `"other"`) > strings.Index(two, `"quiet"`) {
			t.Errorf("export other quiet:\n%s", two)
		}
	})
}

// redisOf returns a client of the fixture's server.
func redisOf(t *testing.T, f fixture) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(f.url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestExportGolden(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		checkGolden(t, "export_other.golden", mustRun(t, 0, f.args("export", "other")...))
		checkGolden(t, "export_demo.golden", mustRun(t, 0, f.args("export", "demo")...))
	})
}

func TestImportRefusesBadFiles(t *testing.T) {
	withClock(t)
	mr, rdb := redistest.Mini(t)
	f := demo(t, rdb)
	_, good := exportFile(t, "demo.jsonl", f.args("export", "demo")...)
	lines := strings.SplitAfter(good, "\n")
	lines = lines[:len(lines)-1] // after the last newline
	edit := func(i int, line string) string {
		c := append([]string{}, lines...)
		c[i] = line
		return strings.Join(c, "")
	}
	gap := strings.Replace(lines[1], `"pending_writes":[]`, `"pending_writes":[{"task_id":"t","task_path":"","index":1,"channel":"c","value":{"type":"null","data":""}}]`, 1)
	if gap == lines[1] {
		t.Fatalf("no empty pending writes in %s", lines[1])
	}
	for _, c := range []struct {
		name, file, want string
	}{
		{"version", edit(0, strings.Replace(lines[0], `"version":1`, `"version":2`, 1)), ":1: export format version 2; this redcheck reads version 1"},
		{"format", edit(0, `{"format":"other","version":1,"exported_at":""}`+"\n"), `:1: format "other"`},
		{"malformed", edit(3, `{"thread_id":"demo",`+"\n"), ":4: unexpected EOF"},
		{"unknown field", edit(2, strings.Replace(lines[2], `{"thread_id"`, `{"extra":1,"thread_id"`, 1)), `:3: json: unknown field "extra"`},
		{"bad versions", edit(2, strings.Replace(lines[2], `"new_versions":{`, `"new_versions":{"nope":"1",`, 1)), `:3: new_versions gives channel "nope"`},
		{"gap", edit(1, gap), `:2: task "t": no write of index 0`},
		{"step", edit(1, strings.Replace(lines[1], `"step":-1`, `"step":"x"`, 1)), `:2: metadata step "x" is not an integer`},
		{"not json", edit(2, "hello\n"), ":3: invalid character 'h'"},
		{"cut short", strings.Join(lines[:len(lines)-1], ""), ":6: no end line"},
		{"count", edit(len(lines)-1, `{"end":"redcheck-export","checkpoints":3}`+"\n"), ":7: the end line counts 3 checkpoints, the file holds 5"},
		{"twice", edit(2, lines[1]), ":3: checkpoint " + f.d1 + ` of thread "demo" namespace "" comes twice`},
		{"empty", "", "empty file"},
	} {
		path := filepath.Join(t.TempDir(), c.name+".jsonl")
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		prefix := redistest.Prefix(t)
		code, _, errs := runArgs(t, argsAt(f, prefix, "import", path)...)
		if code != exitUsage || !strings.Contains(errs, path+c.want) && !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", c.name, code, errs, c.want)
		}
		for _, k := range mr.Keys() {
			if strings.HasPrefix(k, prefix) {
				t.Errorf("%s: the refused import wrote %q", c.name, k)
			}
		}
	}
}

func TestExportUsage(t *testing.T) {
	withClock(t)
	_, rdb := redistest.Mini(t)
	f := demo(t, rdb)
	empty := redistest.Prefix(t)
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"export", "-h"}, 0, "usage: redcheck export THREAD... | --all"},
		{[]string{"import", "-h"}, 0, "usage: redcheck import FILE"},
		{f.args("export"), 2, "name the threads to export, or give --all"},
		{f.args("export", "--all", "demo"), 2, "not both"},
		{f.args("export", "nope"), 1, `thread "nope" has no checkpoints`},
		{f.args("export", "demo", "--ns", "nope"), 1, `thread "demo" namespace "nope" has no checkpoints`},
		{argsAt(f, empty, "export", "demo"), 1, "not found"},
		{f.args("import"), 2, "missing argument"},
		{f.args("import", "a", "b"), 2, `unexpected argument "b"`},
		{f.args("import", "/nonexistent/file.jsonl"), 2, "no such file"},
	} {
		code, out, errs := runArgs(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.stderr) {
			t.Errorf("redcheck %q: exit %d, stderr %q; want %d and %q (stdout %q)", c.args, code, errs, c.code, c.stderr, out)
		}
	}
	// An empty prefix exports as an empty file, which imports as nothing.
	path, out := exportFile(t, "empty.jsonl", argsAt(f, empty, "export", "--all")...)
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, `{"end":"redcheck-export","checkpoints":0}`) {
		t.Errorf("empty export:\n%s", out)
	}
	if got := mustRun(t, 0, argsAt(f, redistest.Prefix(t), "import", path)...); got != "imported 0 threads, 0 checkpoints, 0 pending writes\n" {
		t.Errorf("empty import: %q", got)
	}
}

// TestExportLegacySends: a checkpoint of format v3 reads with its parent's
// writes to __pregel_tasks moved into that channel
// (checkpoint.MigratePendingSends); the export leaves the channel out (it is
// not stored), and the import reads back the same.
func TestExportLegacySends(t *testing.T) {
	withClock(t)
	_, rdb := redistest.Mini(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s := saverAt(t, rdb, prefix)
	cfg, err := s.Put(ctx, checkpoint.Root("old", ""), checkpoint.Checkpoint{V: 3, ID: fixedID(t0, 1), ChannelValues: map[string]any{"a": 1},
		ChannelVersions: map[string]string{"a": "1"}}, checkpoint.Metadata{"step": -1}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: checkpoint.TasksChannel, Value: "send-1"}, {Channel: checkpoint.TasksChannel, Value: "send-2"}}, "t", ""); err != nil {
		t.Fatal(err)
	}
	child, err := s.Put(ctx, cfg, checkpoint.Checkpoint{V: 3, ID: fixedID(t0.Add(time.Second), 2), ChannelValues: map[string]any{},
		ChannelVersions: map[string]string{"a": "1"}}, checkpoint.Metadata{"step": 0}, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.GetTuple(ctx, child)
	if err != nil || !reflect.DeepEqual(want.Checkpoint.ChannelValues[checkpoint.TasksChannel], []any{"send-1", "send-2"}) {
		t.Fatalf("the fixture does not migrate: %+v %v", want, err)
	}
	url := "redis://" + rdb.Options().Addr
	args := func(prefix, cmd string, rest ...string) []string {
		return append([]string{cmd, "--url", url, "--prefix", prefix, "--shards", "4"}, rest...)
	}
	path, out := exportFile(t, "old.jsonl", args(prefix, "export", "old")...)
	if strings.Contains(out, `"channel_versions":{"__pregel_tasks"`) || strings.Count(out, checkpoint.TasksChannel) != 2 {
		t.Errorf("export of a legacy checkpoint:\n%s", out)
	}
	p2 := redistest.Prefix(t)
	mustRun(t, 0, args(p2, "import", path)...)
	if again := mustRun(t, 0, args(p2, "export", "old")...); again != out {
		t.Errorf("re-export differs:\n%s\nwant\n%s", again, out)
	}
	got, err := saverAt(t, rdb, p2).GetTuple(ctx, child)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("GetTuple after import:\n%+v\nwant\n%+v (%v)", got, want, err)
	}
}

// TestClusterExportImport exports from and imports into a real Redis
// Cluster (REDCHECK_CLUSTER=1).
func TestClusterExportImport(t *testing.T) {
	redistest.RequireCluster(t)
	withClock(t)
	c := redistest.StartCluster(t, 3, 0)
	rdb := c.Client(t)
	prefix := redistest.Prefix(t)
	deltaThread(t, rdb, prefix)
	addrs := c.Addrs()
	base := func(prefix, cmd string, rest ...string) []string {
		return append([]string{cmd, "--cluster", "--url", "redis://" + addrs[0] + "?addr=" + addrs[1] + "&addr=" + addrs[2], "--prefix", prefix, "--shards", "4"}, rest...)
	}
	path, out := exportFile(t, "d.jsonl", base(prefix, "export", "--all")...)
	p2 := redistest.Prefix(t)
	mustRun(t, 0, base(p2, "import", path)...)
	if again := mustRun(t, 0, base(p2, "export", "d")...); again != out {
		t.Errorf("re-export differs:\n%s\nwant\n%s", again, out)
	}
	sameHashes(t, rdb, prefix, p2)
}

// TestImportTTL: with --ttl, an imported thread has a lease.
func TestImportTTL(t *testing.T) {
	withClock(t)
	_, rdb := redistest.Mini(t)
	f := demo(t, rdb)
	path, _ := exportFile(t, "other.jsonl", f.args("export", "other")...)
	p2 := redistest.Prefix(t)
	mustRun(t, 0, argsAt(f, p2, "import", "--ttl", "1h", path)...)
	l := keys.Of(saverAt(t, rdb, p2))
	exp, err := rdb.HGet(context.Background(), l.Head("other"), keys.HeadLease).Int64()
	if err != nil || exp <= time.Now().UnixMilli() {
		t.Errorf("lease after import --ttl 1h: %d %v", exp, err)
	}
	if code, _, errs := runArgs(t, argsAt(f, p2, "import", "--ttl", "-1s", path)...); code != exitUsage || !strings.Contains(errs, "must not be negative") {
		t.Errorf("--ttl -1s: exit %d, %s", code, errs)
	}
}
