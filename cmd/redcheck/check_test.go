package main

import (
	"bytes"
	"context"
	"fmt"
	mb "github.com/graphstate/redcheck/internal/member"
	"strconv"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// runArgs runs the command line and returns its exit status and output.
func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// fill writes two threads of two checkpoints under prefix and returns the
// saver and the id of thread "a"'s newest checkpoint.
func fill(t *testing.T, rdb redis.UniversalClient, prefix string) (*redissaver.Saver, string) {
	t.Helper()
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var last string
	for _, th := range []string{"a", "b"} {
		cfg := checkpoint.Config{ThreadID: th}
		for i := range 2 {
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"c": i}, ChannelVersions: map[string]string{"c": fmt.Sprint(i + 1)}}
			if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, cp.ChannelVersions); err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: i}}, "task", ""); err != nil {
				t.Fatal(err)
			}
		}
		if th == "a" {
			last = cfg.CheckpointID
		}
	}
	return s, last
}

func TestCheckCommand(t *testing.T) {
	_, mini := redistest.Mini(t)
	for name, rdb := range map[string]*redis.Client{"miniredis": mini, "redis": redistest.Real(t)} {
		t.Run(name, func(t *testing.T) {
			url := "redis://" + rdb.Options().Addr
			prefix := redistest.Prefix(t)
			s, last := fill(t, rdb, prefix)
			base := []string{"check", "--url", url, "--prefix", prefix, "--shards", "4"}

			code, out, errs := runArgs(t, base...)
			if code != 0 || !strings.Contains(out, "checked 2 threads, 4 checkpoints, 4 writes, 4 values, 4 index entries") ||
				!strings.Contains(out, ": 0 violations, 0 notes") {
				t.Fatalf("sound store: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}

			// A lost value: exit 1, the violation printed precisely.
			blob := keys.Of(s).Blobs("a", genOf(t, rdb, keys.Of(s), "a"), "")
			fields, err := rdb.HKeys(context.Background(), blob).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fields {
				if f == mb.Blob("c", "2") {
					if err := rdb.HDel(context.Background(), blob, f).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			code, out, _ = runArgs(t, base...)
			want := `violation: missing blob: thread "a" ns "" checkpoint ` + last + `: channel "c"`
			if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, ": 1 violations, 0 notes") {
				t.Fatalf("lost value: exit %d, want 1 with %q; stdout:\n%s", code, want, out)
			}
			// The other thread alone is sound.
			if code, out, _ = runArgs(t, append(base, "--thread", "b")...); code != 0 || !strings.Contains(out, "checked 1 threads, 2 checkpoints") {
				t.Fatalf("--thread b: exit %d\n%s", code, out)
			}
			if code, _, _ = runArgs(t, append(base, "--thread", "a")...); code != 1 {
				t.Fatalf("--thread a: exit %d, want 1", code)
			}
			// Another prefix holds nothing: sound, and left as it was (a
			// checker writes nothing).
			empty := redistest.Prefix(t)
			if code, out, _ = runArgs(t, "check", "--url", url, "--prefix", empty); code != 0 || !strings.Contains(out, "holds no redcheck data") {
				t.Fatalf("empty prefix: exit %d\n%s", code, out)
			}
			if n := rdb.Exists(context.Background(), empty+":meta").Val(); n != 0 {
				t.Errorf("checking an empty prefix created its meta key")
			}
			// A lost meta key is a violation, not created again.
			if err := rdb.Del(context.Background(), keys.Of(s).Meta()).Err(); err != nil {
				t.Fatal(err)
			}
			code, out, _ = runArgs(t, base...)
			if code != 1 || !strings.Contains(out, "violation: checkpoint: data loss: prefix "+strconv.Quote(prefix)+" has no meta key "+keys.Of(s).Meta()) {
				t.Fatalf("lost meta key: exit %d, want 1\n%s", code, out)
			}
			if n := rdb.Exists(context.Background(), keys.Of(s).Meta()).Val(); n != 0 {
				t.Errorf("checking a prefix that lost its meta key wrote it again")
			}
		})
	}
}

func TestCheckCommandNotes(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	s, last := fill(t, rdb, prefix)
	// Deleting a checkpoint's parent leaves a dangling parent: a note.
	tup, err := s.GetTuple(context.Background(), checkpoint.Config{ThreadID: "a", CheckpointID: last})
	if err != nil {
		t.Fatal(err)
	}
	parent := tup.ParentConfig.CheckpointID
	for _, k := range []string{keys.Of(s).Checkpoint("a", genOf(t, rdb, keys.Of(s), "a"), "", parent)} {
		mr.Del(k)
	}
	url := "redis://" + mr.Addr()
	code, out, _ := runArgs(t, "check", "--url", url, "--prefix", prefix, "--shards", "4")
	if code != 1 || !strings.Contains(out, "note: dangling parent: thread \"a\"") || !strings.Contains(out, "violation: missing checkpoint") {
		t.Fatalf("a hash deleted by hand: exit %d, want 1 with a note and violations\n%s", code, out)
	}
	// With the saver's TTL given, the missing hash reads as expired: notes only.
	code, out, _ = runArgs(t, "check", "--url", url, "--prefix", prefix, "--shards", "4", "--ttl", "1h")
	if code != 0 || !strings.Contains(out, "note: expired:") || strings.Contains(out, "violation:") {
		t.Fatalf("with --ttl: exit %d, want 0 with notes only\n%s", code, out)
	}
}

func TestCommandUsage(t *testing.T) {
	mr, _ := redistest.Mini(t)
	url := "redis://" + mr.Addr()
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "usage: redcheck <command>"},
		{[]string{"help"}, 0, ""},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"check", "-h"}, 0, "usage: redcheck check"},
		{[]string{"check", "--no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"check", "--url", url, "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"check", "--url", "http://x"}, 2, "bad Redis URL"},
		{[]string{"check", "--url", url, "--prefix", "a{b"}, 2, `invalid config: prefix "a{b" holds '{'`},
		{[]string{"check", "--url", url, "--shards", "-3"}, 2, "invalid config: shards must be 1 to 16384"},
		{[]string{"check", "--url", url, "--thread", strings.Repeat("x", 5000)}, 2, "invalid"},
		{[]string{"check", "--url", "redis://127.0.0.1:1"}, 2, "cannot reach Redis at redis://127.0.0.1:1"},
		{[]string{"check", "--url", "redis://user:secret@127.0.0.1:1"}, 2, "redis://user:xxxxx@127.0.0.1:1"},
	} {
		code, out, errs := runArgs(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.stderr) {
			t.Errorf("redcheck %q: exit %d, stderr %q; want %d and %q (stdout %q)", c.args, code, errs, c.code, c.stderr, out)
		}
		if strings.Contains(errs, "secret") {
			t.Errorf("redcheck %q printed the password: %s", c.args, errs)
		}
	}
	if _, out, _ := runArgs(t, "help"); !strings.Contains(out, "check") {
		t.Errorf("help lists no commands:\n%s", out)
	}
}

// TestClusterCheckCommand runs the command against a real Redis Cluster.
func TestClusterCheckCommand(t *testing.T) {
	redistest.RequireCluster(t)
	c := redistest.StartCluster(t, 3, 0)
	rdb := c.Client(t)
	prefix := redistest.Prefix(t)
	s, _ := fill(t, rdb, prefix)
	addrs := c.Addrs()
	url := "redis://" + addrs[0] + "?addr=" + addrs[1] + "&addr=" + addrs[2]
	code, out, errs := runArgs(t, "check", "--cluster", "--url", url, "--prefix", prefix, "--shards", "4")
	if code != 0 || !strings.Contains(out, "checked 2 threads, 4 checkpoints") {
		t.Fatalf("cluster: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if err := rdb.Del(context.Background(), keys.Of(s).Blobs("b", genOf(t, rdb, keys.Of(s), "b"), "")).Err(); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = runArgs(t, "check", "--cluster", "--url", url, "--prefix", prefix, "--shards", "4"); code != 1 {
		t.Fatalf("cluster, blobs deleted: exit %d, want 1\n%s", code, out)
	}
}

// genOf returns the current generation of a thread.
func genOf(t *testing.T, rdb redis.UniversalClient, l keys.Layout, thread string) string {
	t.Helper()
	g, err := rdb.HGet(context.Background(), l.Head(thread), "g").Result()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
