package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/internal/seal"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/redis/go-redis/v9"
)

// testKey is the key of id in the tests: 32 bytes of its last character.
func testKey(id string) []byte { return bytes.Repeat([]byte(id[len(id)-1:]), checkpoint.KeySize) }

// keyFile writes the key of id into a file of the test's directory, as
// text (hex), and returns the --key flag that names it.
func keyFile(t *testing.T, id string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), id+".key")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(testKey(id))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return id + "=" + path
}

// testRing is the keyring of ids, current the first.
func testRing(t *testing.T, ids ...string) *checkpoint.Keyring {
	t.Helper()
	m := map[string][]byte{}
	for _, id := range ids {
		m[id] = testKey(id)
	}
	r, err := checkpoint.NewKeyring(ids[0], m)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// storedValues reads every stored value of the threads under layout (the
// current generation's channel values and pending writes, and early
// writes), each opened at its place with ring (nil: as stored), by place.
// A value that does not open fails the test.
func storedValues(t *testing.T, rdb redis.UniversalClient, l keys.Layout, ring *checkpoint.Keyring, threads ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	open := func(place, stored string, aad []byte) {
		if stored == "" {
			return
		}
		if ring == nil {
			out[place] = stored
			return
		}
		plain, err := codec.OpenValue(ctx, ring, false, stored, func() []byte { return aad }, func() string { return place })
		if err != nil {
			t.Errorf("%s: %v", place, err)
			return
		}
		out[place] = plain
	}
	writes := func(th, ns, id string, h map[string]string) {
		for f, v := range h {
			task, idx, ok := codec.ParseWriteField(f)
			if !ok {
				continue
			}
			var parts [3]string
			if !codec.Unpack(v, parts[:]) {
				t.Fatalf("write %s %q", id, f)
			}
			open(fmt.Sprintf("w %s/%s/%s/%s/%d", th, ns, id, task, idx)+" "+parts[0]+" "+parts[1], parts[2],
				seal.WriteAAD(l.Prefix(), th, ns, id, task, idx, parts[0]))
		}
	}
	for _, th := range threads {
		gen := rdb.HGet(ctx, l.Head(th), keys.HeadGeneration).Val()
		for _, encns := range rdb.SMembers(ctx, l.Namespaces(th, gen)).Val() {
			ns, _ := keys.Decode(encns)
			for f, v := range rdb.HGetAll(ctx, l.Blobs(th, gen, ns)).Val() {
				if f == "#" {
					continue
				}
				n, rest, _ := codec.CutLen(f)
				open(fmt.Sprintf("c %s/%s/%s/%s", th, ns, rest[:n], rest[n:]), v, seal.ChannelAAD(l.Prefix(), th, ns, rest[:n], rest[n:]))
			}
			for _, id := range rdb.ZRange(ctx, l.Index(th, gen, ns), 0, -1).Val() {
				writes(th, ns, id, rdb.HGetAll(ctx, l.Checkpoint(th, gen, ns, id)).Val())
			}
		}
	}
	for n := range l.Shards() {
		for _, m := range rdb.ZRange(ctx, l.EarlyIndex(n), 0, -1).Val() {
			p := strings.SplitN(m, "\x00", 3)
			th, _ := keys.Decode(p[0])
			ns, _ := keys.Decode(p[1])
			writes(th, ns, p[2], rdb.HGetAll(ctx, l.Early(th, ns, p[2])).Val())
		}
	}
	return out
}

// keyIDs counts the stored values of the threads by key id ("" for
// plaintext).
func keyIDs(t *testing.T, rdb redis.UniversalClient, l keys.Layout, threads ...string) map[string]int {
	t.Helper()
	ids := map[string]int{}
	for _, v := range storedValues(t, rdb, l, nil, threads...) {
		env, err := seal.Parse(v)
		if err != nil {
			ids[""]++
			continue
		}
		ids[env.KeyID]++
	}
	return ids
}

// TestRekeyCommand: plaintext to k1 (--read-plaintext), k1 to k2, every
// value opening at its place to the plaintext it had; a second run changes
// nothing; --json; a value that cannot be opened is left and reported.
func TestRekeyCommand(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		rdb := redisOf(t, f)
		l, err := keys.New(f.prefix, 4)
		if err != nil {
			t.Fatal(err)
		}
		// An early write too: to a checkpoint not stored yet.
		s := saverAt(t, rdb, f.prefix)
		early := checkpoint.Config{ThreadID: "demo", CheckpointID: fixedID(t0.Add(time.Hour), 9)}
		if err := s.PutWrites(ctx, early, []checkpoint.Write{{Channel: "messages", Value: "early"}}, "task-e", "p"); err != nil {
			t.Fatal(err)
		}
		threads := []string{"demo", "other", "quiet"}
		plain := storedValues(t, rdb, l, nil, threads...)
		if len(plain) < 10 {
			t.Fatalf("the fixture holds %d values", len(plain))
		}
		k1, k2 := keyFile(t, "k1"), keyFile(t, "k2")

		// Without --read-plaintext, plaintext is left: exit 1.
		out := mustRun(t, exitFound, f.args("rekey", "--all", "--key", k1, "--progress", "0")...)
		if !strings.Contains(out, "plaintext left") || !strings.Contains(out, "--read-plaintext") {
			t.Errorf("output:\n%s", out)
		}
		if ids := keyIDs(t, rdb, l, threads...); ids[""] != len(plain) {
			t.Fatalf("key ids after a rekey without --read-plaintext: %v", ids)
		}

		// --dry-run counts and writes nothing; --progress prints to stderr.
		var sum rekeySummary
		code, out, errs := runArgs(t, f.args("rekey", "--all", "--key", k1, "--read-plaintext", "--json", "--dry-run", "--progress", "1ns")...)
		decodeStrict(t, out, &sum)
		if code != exitOK || !sum.DryRun || sum.Values.Rekeyed+sum.Writes.Rekeyed != len(plain) || sum.Calls != 0 || !strings.Contains(errs, "rekey: 3 threads") {
			t.Errorf("--dry-run: exit %d, %+v\n%s", code, sum, errs)
		}
		if ids := keyIDs(t, rdb, l, threads...); ids[""] != len(plain) {
			t.Fatalf("key ids after --dry-run: %v", ids)
		}

		out = mustRun(t, exitOK, f.args("rekey", "--all", "--key", k1, "--read-plaintext", "--json", "--batch", "3", "--pause", "1ms")...)
		decodeStrict(t, out, &sum)
		if got := sum.Values.Rekeyed + sum.Writes.Rekeyed; got != len(plain) || sum.Left != 0 || sum.Threads != 3 || sum.CurrentKey != "k1" {
			t.Errorf("summary %+v, want %d rekeyed", sum, len(plain))
		}
		if ids := keyIDs(t, rdb, l, threads...); ids["k1"] != len(plain) {
			t.Fatalf("key ids: %v", ids)
		}
		if got := storedValues(t, rdb, l, testRing(t, "k1"), threads...); !maps.Equal(got, plain) {
			t.Fatalf("values under k1 differ from the plaintext:\n%v\n%v", got, plain)
		}

		// Rotation: k2 current, k1 still in the ring.
		out = mustRun(t, exitOK, f.args("rekey", "--all", "--key", k1, "--key", k2, "--current-key", "k2", "--json")...)
		decodeStrict(t, out, &sum)
		if sum.Values.Rekeyed+sum.Writes.Rekeyed != len(plain) || sum.Values.Current+sum.Writes.Current != 0 {
			t.Errorf("rotation summary %+v", sum)
		}
		if got := storedValues(t, rdb, l, testRing(t, "k2"), threads...); !maps.Equal(got, plain) {
			t.Fatalf("values under k2 differ from the plaintext")
		}
		// Idempotent: all under k2 already.
		out = mustRun(t, exitOK, f.args("rekey", "demo", "other", "quiet", "--key", k1, "--key", k2, "--current-key", "k2", "--json")...)
		decodeStrict(t, out, &sum)
		if sum.Values.Rekeyed+sum.Writes.Rekeyed != 0 || sum.Values.Current+sum.Writes.Current != len(plain) || sum.Calls != 0 {
			t.Errorf("second run %+v", sum)
		}

		// A thread that does not exist: exit 1.
		out = mustRun(t, exitFound, f.args("rekey", "demo", "nobody", "--key", k2, "--json")...)
		decodeStrict(t, out, &sum)
		if fmt.Sprint(sum.Missing) != "[nobody]" || sum.Threads != 1 {
			t.Errorf("summary with a missing thread %+v", sum)
		}

		// A ciphertext moved by hand to another channel's place fails, and
		// is left as it is; the rest is rekeyed.
		gen := rdb.HGet(ctx, l.Head("demo"), keys.HeadGeneration).Val()
		blobs := l.Blobs("demo", gen, "")
		moved := rdb.HGet(ctx, blobs, "5:count1").Val()
		if err := rdb.HSet(ctx, blobs, "5:count2", moved).Err(); err != nil {
			t.Fatal(err)
		}
		k3 := keyFile(t, "k3")
		code, out, errs = runArgs(t, f.args("rekey", "--all", "--key", k2, "--key", k3, "--current-key", "k3")...)
		if code != exitFound || !strings.Contains(out, `failed: checkpoint: cannot decrypt`) || !strings.Contains(out, `channel "count" version "2"`) {
			t.Errorf("exit %d, output:\n%s\n%s", code, out, errs)
		}
		if got := rdb.HGet(ctx, blobs, "5:count2").Val(); got != moved {
			t.Error("the misplaced value was rewritten")
		}
		for _, k := range []string{"k2", "k3"} {
			if key := string(testKey(k)); strings.Contains(out+errs, key) || strings.Contains(out+errs, hex.EncodeToString([]byte(key))) {
				t.Errorf("the output shows key %s", k)
			}
		}
		if ids := keyIDs(t, rdb, l, threads...); ids["k3"] != len(plain)-1 || ids["k2"] != 1 {
			t.Errorf("key ids: %v", ids)
		}
	})
}

// TestRekeyStore: a memory store's items, put in the clear, encrypted by
// rekey --store --read-plaintext, then read by a store that refuses
// plaintext; then rotated.
func TestRekeyStore(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		rdb := redisOf(t, f)
		sp := f.prefix + ":store"
		plainStore, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: sp})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 7 {
			ns := []string{"users", fmt.Sprint("u:", i%3), "mem"}
			if err := plainStore.Put(ctx, ns, fmt.Sprint("k/", i), map[string]any{"text": fmt.Sprint("note ", i), "i": i}); err != nil {
				t.Fatal(err)
			}
		}
		k1, k2 := keyFile(t, "k1"), keyFile(t, "k2")
		args := func(rest ...string) []string {
			return append([]string{"rekey", "--url", f.url, "--store", "--store-prefix", sp, "--json"}, rest...)
		}
		var sum rekeySummary
		decodeStrict(t, mustRun(t, exitOK, args("--key", k1, "--read-plaintext")...), &sum)
		if sum.Items.Read != 7 || sum.Items.Rekeyed != 7 || sum.Threads != 0 {
			t.Errorf("summary %+v", sum)
		}
		for _, ring := range []*checkpoint.Keyring{testRing(t, "k1"), nil} {
			if ring == nil {
				decodeStrict(t, mustRun(t, exitOK, args("--key", k1, "--key", k2, "--current-key", "k2")...), &sum)
				if sum.Items.Rekeyed != 7 {
					t.Errorf("rotation %+v", sum)
				}
				ring = testRing(t, "k2")
			}
			st, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: sp, Encryption: ring})
			if err != nil {
				t.Fatal(err)
			}
			hits, err := st.Search(ctx, []string{"users"}, redisstore.SearchOptions{Filter: map[string]any{"i": map[string]any{"$gte": 0}}, Limit: 100})
			if err != nil || len(hits) != 7 {
				t.Fatalf("Search under %v: %d items, %v", ring, len(hits), err)
			}
			for _, h := range hits {
				if h.Value["text"] != fmt.Sprint("note ", h.Value["i"]) {
					t.Errorf("item %v", h.Value)
				}
			}
		}
		_, err = plainStore.Get(ctx, []string{"users", "u:0", "mem"}, "k/0")
		if !errors.Is(err, checkpoint.ErrDecrypt) {
			t.Errorf("a store without keys read an encrypted item: %v", err)
		}
	})
}

// TestRekeyScript: rekey.lua replaces a field only where it holds the bytes
// read; a changed or deleted field is left (and no hash is created).
func TestRekeyScript(t *testing.T) {
	_, mini := redistest.Mini(t)
	for name, rdb := range map[string]redis.UniversalClient{"miniredis": mini, "redis": redistest.Real(t)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			p := redistest.Prefix(t)
			a, b, gone := "{"+p+"}:a", "{"+p+"}:b", "{"+p+"}:gone"
			rdb.HSet(ctx, a, "x", "old", "y", "newer", "keep", "k")
			rdb.HSet(ctx, b, "z", "old")
			res, err := scriptrun.Run(ctx, rdb, scriptrun.Rekey, []string{a, b, gone}, 5,
				1, "x", "old", "NEW", 1, "y", "old", "NEW", 1, "w", "old", "NEW", 2, "z", "old", "NEW", 3, "v", "old", "NEW").Int64Slice()
			if err != nil || fmt.Sprint(res) != "[2 1 2]" {
				t.Fatalf("rekey.lua = %v, %v; want [2 1 2]", res, err)
			}
			want := map[string]map[string]string{a: {"x": "NEW", "y": "newer", "keep": "k"}, b: {"z": "NEW"}, gone: {}}
			for k, w := range want {
				if got := rdb.HGetAll(ctx, k).Val(); !maps.Equal(got, w) {
					t.Errorf("%s = %v, want %v", k, got, w)
				}
			}
			for _, args := range [][]any{{2, 1, "x", "a", "b"}, {1, 4, "x", "NEW", "b"}, {"n"}} {
				if err := scriptrun.Run(ctx, rdb, scriptrun.Rekey, []string{a}, args...).Err(); err == nil || !strings.Contains(err.Error(), "BADARGS") {
					t.Errorf("args %v: %v, want BADARGS", args, err)
				}
			}
		})
	}
}

// TestRekeyKeyFlags: how keys are given, and what is refused; no error
// shows a key.
func TestRekeyKeyFlags(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("c2VjcmV0LXNob3J0LWtleQ=="), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "raw")
	if err := os.WriteFile(raw, testKey("r"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REKEY_TEST_K", base64.StdEncoding.EncodeToString(testKey("e")))
	t.Setenv("REKEY_TEST_BAD", "not a key")
	for _, c := range []struct {
		name  string
		flags []string
		ok    string // the current key id, or "" for an error
	}{
		{"a raw file", []string{"--key", "r=" + raw}, "r"},
		{"hex file and base64 variable", []string{"--key", keyFile(t, "h"), "--key-env", "e=REKEY_TEST_K", "--current-key", "e"}, "e"},
		{"no current among several", []string{"--key", "r=" + raw, "--key-env", "e=REKEY_TEST_K"}, ""},
		{"a short key", []string{"--key", "s=" + short}, ""},
		{"a bad variable", []string{"--key-env", "b=REKEY_TEST_BAD"}, ""},
		{"an unset variable", []string{"--key-env", "b=REKEY_TEST_UNSET"}, ""},
		{"a missing file", []string{"--key", "m=" + filepath.Join(dir, "none")}, ""},
		{"a key twice", []string{"--key", "r=" + raw, "--key-env", "r=REKEY_TEST_K"}, ""},
		{"a current key not given", []string{"--key", "r=" + raw, "--current-key", "x"}, ""},
		{"a bad key id", []string{"--key", "r 1=" + raw}, ""},
		{"--read-plaintext without keys", []string{"--read-plaintext"}, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		kf := addKeyFlags(fs, "")
		if err := fs.Parse(c.flags); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ring, err := kf.ring()
		switch {
		case c.ok != "" && (err != nil || ring.CurrentKeyID() != c.ok):
			t.Errorf("%s: %v, %v", c.name, ring, err)
		case c.ok == "" && err == nil:
			t.Errorf("%s: accepted", c.name)
		case err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "c2Vj") || strings.Contains(err.Error(), "not a key")):
			t.Errorf("%s: the error shows the key: %v", c.name, err)
		}
	}
	// The command refuses to run without keys, or with bad arguments.
	for _, args := range [][]string{
		{"rekey", "--all"},
		{"rekey", "--key", "r=" + raw},
		{"rekey", "t", "--all", "--key", "r=" + raw},
		{"rekey", "--all", "--key", "r=" + raw, "--batch", "1000"},
	} {
		if code, _, _ := runArgs(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestClusterRekeyCommand: rekey on a Redis Cluster, threads and store.
func TestClusterRekeyCommand(t *testing.T) {
	redistest.RequireCluster(t)
	c := redistest.StartCluster(t, 3, 0)
	rdb := c.Client(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s, _ := fill(t, rdb, prefix)
	st, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: prefix + ":store"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, []string{"n"}, "k", map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	addrs := c.Addrs()
	url := "redis://" + addrs[0] + "?addr=" + addrs[1] + "&addr=" + addrs[2]
	out := mustRun(t, exitOK, "rekey", "--cluster", "--url", url, "--prefix", prefix, "--shards", "4", "--all",
		"--store", "--store-prefix", prefix+":store", "--key", keyFile(t, "k1"), "--read-plaintext", "--json")
	var sum rekeySummary
	decodeStrict(t, out, &sum)
	if sum.Threads != 2 || sum.Values.Rekeyed != 4 || sum.Writes.Rekeyed != 4 || sum.Items.Rekeyed != 1 {
		t.Errorf("summary %+v", sum)
	}
	if ids := keyIDs(t, rdb, keys.Of(s), "a", "b"); !maps.Equal(ids, map[string]int{"k1": 8}) {
		t.Errorf("key ids %v", ids)
	}
}

// TestCommandsWithKeys: on a prefix rekeyed from plaintext, the commands
// that read values (threads, history, show, diff, check, export) answer
// with the keys what they answered on the plaintext, and fail without
// them; an export imported with keys is stored encrypted and exports the
// same again.
func TestCommandsWithKeys(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		rdb := redisOf(t, f)
		deltaThread(t, rdb, f.prefix)
		cmds := [][]string{
			{"threads", "--json"},
			{"history", "demo"},
			{"show", "demo", "--json"},
			{"show", "d"},
			{"diff", "demo", f.d2, f.d4, "--json"},
			{"export", "--all"},
		}
		before := make([]string, len(cmds))
		for i, c := range cmds {
			before[i] = mustRun(t, exitOK, f.args(c[0], c[1:]...)...)
		}
		k1 := keyFile(t, "k1")
		mustRun(t, exitOK, f.args("rekey", "--all", "--key", k1, "--read-plaintext", "--progress", "0")...)
		for i, c := range cmds {
			if got := mustRun(t, exitOK, f.args(c[0], append(c[1:], "--key", k1)...)...); got != before[i] {
				t.Errorf("%q with the key:\n%s\nwant\n%s", c, got, before[i])
			}
			code, out, errs := runArgs(t, f.args(c[0], c[1:]...)...)
			if code != exitUsage || !strings.Contains(errs, "cannot decrypt") {
				t.Errorf("%q without the key: exit %d\n%s\n%s", c, code, out, errs)
			}
		}
		if out := mustRun(t, exitOK, f.args("check", "--key", k1)...); !strings.Contains(out, ": 0 violations, 0 notes") {
			t.Errorf("check with the key:\n%s", out)
		}
		if code, out, _ := runArgs(t, f.args("check")...); code == exitOK {
			t.Errorf("check without the key passed:\n%s", out)
		}
		// A copy re-seals for its target: it needs the keys.
		if code, _, errs := runArgs(t, f.args("copy", "demo", "demo2", "--yes")...); code != exitUsage || !strings.Contains(errs, "cannot decrypt") {
			t.Errorf("copy without the key: exit %d, %s", code, errs)
		}
		mustRun(t, exitOK, f.args("copy", "demo", "demo2", "--yes", "--key", k1)...)
		l, _ := keys.New(f.prefix, 4)
		if ids := keyIDs(t, rdb, l, "demo2"); ids[""] != 0 || ids["k1"] == 0 {
			t.Errorf("key ids of the copy: %v", ids)
		}
		var orig, copied showDoc
		decodeStrict(t, before[2], &orig)
		decodeStrict(t, mustRun(t, exitOK, f.args("show", "demo2", "--json", "--key", k1)...), &copied)
		if !reflect.DeepEqual(orig.Channels, copied.Channels) || !reflect.DeepEqual(orig.PendingWrites, copied.PendingWrites) || len(orig.Channels) == 0 {
			t.Errorf("the copy reads\n%v\nnot\n%v", copied.Channels, orig.Channels)
		}
		if out := mustRun(t, exitOK, f.args("check", "--key", k1)...); !strings.Contains(out, ": 0 violations, 0 notes") {
			t.Errorf("check after the copy:\n%s", out)
		}

		// Export, then import into another prefix with another key: stored
		// encrypted there, and exported the same.
		file, out := exportFile(t, "all.jsonl", f.args("export", "--all", "--key", k1)...)
		k2 := keyFile(t, "k2")
		p2 := redistest.Prefix(t)
		mustRun(t, exitOK, argsAt(f, p2, "import", file, "--key", k2)...)
		if again := mustRun(t, exitOK, argsAt(f, p2, "export", "--all", "--key", k2)...); again != out {
			t.Fatalf("export after an encrypted import differs:\n%s\nwant\n%s", again, out)
		}
		l2, _ := keys.New(p2, 4)
		if ids := keyIDs(t, rdb, l2, "demo", "other", "quiet", "d"); ids[""] != 0 || ids["k2"] == 0 {
			t.Errorf("key ids after an encrypted import: %v", ids)
		}
		if out := mustRun(t, exitOK, argsAt(f, p2, "check", "--key", k2)...); !strings.Contains(out, ": 0 violations, 0 notes") {
			t.Errorf("check of the import:\n%s", out)
		}
	})
}

// TestRekeyConcurrentWriter: a value a writer replaces, and one it
// deletes, between rekey's read and its compare-and-set, are left as the
// writer left them (counted changed and gone); the others are rekeyed.
func TestRekeyConcurrentWriter(t *testing.T) {
	servers(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		rdb := redisOf(t, f)
		var replaced, deleted [2]string // hash, field
		beforeRekeyCall = func(keys []string, args []any) {
			if replaced[0] != "" || args[0].(int) < 2 {
				return
			}
			at := func(i int) (string, string) { return keys[args[1+4*i].(int)-1], args[2+4*i].(string) }
			replaced[0], replaced[1] = at(0)
			deleted[0], deleted[1] = at(1)
			rdb.HSet(ctx, replaced[0], replaced[1], "the writer's value")
			rdb.HDel(ctx, deleted[0], deleted[1])
		}
		t.Cleanup(func() { beforeRekeyCall = nil })
		out := mustRun(t, exitOK, f.args("rekey", "demo", "--key", keyFile(t, "k1"), "--read-plaintext", "--json")...)
		var sum rekeySummary
		decodeStrict(t, out, &sum)
		if sum.Values.Changed != 1 || sum.Values.Gone != 1 || sum.Values.Rekeyed != sum.Values.Read-2 || sum.Left != 0 {
			t.Errorf("summary %+v", sum)
		}
		if got := rdb.HGet(ctx, replaced[0], replaced[1]).Val(); got != "the writer's value" {
			t.Errorf("the writer's value was overwritten: %q", got)
		}
		if n := rdb.HExists(ctx, deleted[0], deleted[1]).Val(); n {
			t.Error("a value deleted meanwhile was written back")
		}
	})
}
