package redissaver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"slices"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	mb "github.com/graphstate/redcheck/internal/member"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// safetyThread writes a thread of two namespaces, three checkpoints each,
// with writes, each namespace under a run of its own ("run-" and
// "run-sub"), and returns its last config in the root namespace.
func safetyThread(t *testing.T, s *redissaver.Saver, th string) checkpoint.Config {
	t.Helper()
	ctx := context.Background()
	var last checkpoint.Config
	for _, ns := range []string{"", "sub"} {
		cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
		for i := range 3 {
			v := fmt.Sprint(i + 1)
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"msgs": i, "cfg": "c"},
				ChannelVersions: map[string]string{"msgs": v, "cfg": "1"}}
			nv := map[string]string{"msgs": v}
			if i == 0 {
				nv["cfg"] = "1"
			}
			var err error
			if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i, "run_id": "run-" + ns}, nv); err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: i}}, "task", ""); err != nil {
				t.Fatal(err)
			}
		}
		if ns == "" {
			last = cfg
		}
	}
	return last
}

// TestEveryKeyLost deletes each key of a thread, and of its shard's
// indexes, in turn, as an eviction would, and reads the thread every way: each read either answers exactly
// what it answered before, or fails with checkpoint.ErrDataLoss. None
// answers partial, older or empty state with a nil error.
// Real Redis only: miniredis has no DUMP and RESTORE.
func TestEveryKeyLost(t *testing.T) {
	for _, b := range backends[1:] {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{Shards: 4})
			last := safetyThread(t, s, "victim")
			snap := readAll(t, s, last)
			if snap.err != nil {
				t.Fatalf("reads of the sound thread: %v", snap.err)
			}
			n := 0
			for _, k := range threadKeys(t, rdb, s, "victim") {
				t.Run(strings.TrimPrefix(k, keys.Of(s).Prefix()), func(t *testing.T) {
					defer redistest.LoseKey(t, rdb, k)()
					got := readAll(t, s, last)
					redistest.JudgeLoss(t, k, snap.out, got.out, got.errs)
					n++
				})
			}
			if n < 10 {
				t.Errorf("only %d keys tried", n)
			}
		})
	}
}

// TestEveryKeyLostThenWritten deletes each key of a thread in turn, as
// TestEveryKeyLost does, then writes to the thread: a child of its latest
// checkpoint, a root in a new namespace, pending writes. Each write either
// fails with checkpoint.ErrDataLoss or leaves the loss for a read to find:
// no write turns lost data into an answer (a namespace index made anew
// without the checkpoints it lost, a values hash without the values).
// Prunes, a deletion of the thread and a sweep may delete what was lost
// with the rest; they too answer nil or ErrDataLoss, and every read after
// them answers nil or ErrDataLoss (or ErrNotFound, for a thread deleted).
func TestEveryKeyLostThenWritten(t *testing.T) {
	rdb := redistest.Real(t)
	ctx := context.Background()
	writes := []struct {
		name string
		run  func(s *redissaver.Saver, last checkpoint.Config) error
	}{
		{"child", func(s *redissaver.Saver, last checkpoint.Config) error {
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"msgs": 9, "cfg": "c"},
				ChannelVersions: map[string]string{"msgs": "9", "cfg": "1"}}
			_, err := s.Put(ctx, last, cp, checkpoint.Metadata{"step": 9}, map[string]string{"msgs": "9"})
			return err
		}},
		{"root in a new namespace", func(s *redissaver.Saver, last checkpoint.Config) error {
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"msgs": 1},
				ChannelVersions: map[string]string{"msgs": "1"}}
			_, err := s.Put(ctx, checkpoint.Config{ThreadID: last.ThreadID, CheckpointNS: "new"}, cp, checkpoint.Metadata{"step": 0}, map[string]string{"msgs": "1"})
			return err
		}},
		{"pending writes", func(s *redissaver.Saver, last checkpoint.Config) error {
			return s.PutWrites(ctx, last, []checkpoint.Write{{Channel: "w", Value: 9}}, "task9", "")
		}},
		// Deletions may delete what was lost with the rest: they only answer
		// nil or ErrDataLoss, and leave reads that do the same.
		{"prune keep latest", func(s *redissaver.Saver, last checkpoint.Config) error {
			return s.Prune(ctx, []string{last.ThreadID}, checkpoint.PruneKeepLatest)
		}},
		{"prune delete", func(s *redissaver.Saver, last checkpoint.Config) error {
			return s.Prune(ctx, []string{last.ThreadID}, checkpoint.PruneDelete)
		}},
		{"delete thread", func(s *redissaver.Saver, last checkpoint.Config) error { return s.DeleteThread(ctx, last.ThreadID) }},
		{"delete for runs", func(s *redissaver.Saver, last checkpoint.Config) error {
			return s.DeleteForRuns(ctx, []string{"run-sub"})
		}},
		{"sweep", func(s *redissaver.Saver, last checkpoint.Config) error { _, err := s.Sweep(ctx); return err }},
	}
	n := len(threadKeys(t, rdb, func() *redissaver.Saver {
		s := newSaver(t, rdb, redissaver.Options{Shards: 4})
		safetyThread(t, s, "victim")
		return s
	}(), "victim"))
	if n < 10 {
		t.Fatalf("only %d keys", n)
	}
	for j, w := range writes {
		for i := range 2 * n {
			// The write goes through the saver that wrote the thread (it knows
			// the thread's generation: a Put stages its values), or through a
			// new one (a Put passes them through its script).
			opts := redissaver.Options{Shards: 4, AcceptEviction: true, Prefix: fmt.Sprintf("%s-%d-%d", redistest.Prefix(t), j, i)}
			s, err := redissaver.New(ctx, rdb, opts)
			if err != nil {
				t.Fatal(err)
			}
			last := safetyThread(t, s, "victim")
			ks := threadKeys(t, rdb, s, "victim")
			if len(ks) != n {
				t.Fatalf("%d keys, then %d", n, len(ks))
			}
			k := ks[i%n]
			name := strings.TrimPrefix(k, keys.Of(s).Prefix())
			if i >= n {
				if s, err = redissaver.New(ctx, rdb, opts); err != nil {
					t.Fatal(err)
				}
				name += " (a new saver)"
			}
			must(t, rdb.Del(ctx, k).Err())
			err = w.run(s, last)
			if err != nil && !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Errorf("%s after losing %s: %v, want nil or ErrDataLoss", w.name, name, err)
			}
			after := readAll(t, s, last)
			for what, rerr := range after.errs {
				// What the write deleted: the thread, or namespace "sub" (run-sub).
				deleted := w.name == "prune delete" || w.name == "delete thread" || (w.name == "delete for runs" && strings.HasSuffix(what, " sub"))
				if rerr != nil && !errors.Is(rerr, checkpoint.ErrDataLoss) && !(deleted && errors.Is(rerr, checkpoint.ErrNotFound)) {
					t.Errorf("%s after %s after losing %s: %v, want nil or ErrDataLoss", what, w.name, name, rerr)
				}
			}
			if err == nil && after.err == nil && !strings.HasPrefix(w.name, "prune") && w.name != "delete thread" {
				t.Errorf("%s after losing %s succeeded, and no read finds the loss any more", w.name, name)
			}
		}
	}
}

// threadKeys returns, sorted (the same order for every build of a thread
// with safetyThread, whatever its generation), the keys of a thread but its
// event stream, and its shard's: its registry, its index of every
// checkpoint (which only a listing of every thread reads) and its run
// indexes.
func threadKeys(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver, th string) []string {
	t.Helper()
	ctx := context.Background()
	ks, err := rdb.Keys(ctx, keys.Of(s).ThreadBase(th)+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	shard := keys.Of(s).ShardBase(keys.Of(s).Shard(th))
	runs, err := rdb.Keys(ctx, shard+"run:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	ks = append(append(ks, shard+"threads", shard+"all"), runs...)
	ks = slices.DeleteFunc(ks, func(k string) bool { return strings.HasSuffix(k, ":events") })
	slices.Sort(ks)
	return ks
}

// reads holds what readAll saw: per read, its answer printed and its error.
type reads struct {
	out  map[string]string
	errs map[string]error
	err  error // the first error
}

// copies counts the copies readAll made, so that each has a new target.
var copies int

func readAll(t *testing.T, s *redissaver.Saver, last checkpoint.Config) reads {
	t.Helper()
	ctx := context.Background()
	r := reads{out: map[string]string{}, errs: map[string]error{}}
	note := func(what string, v any, err error) {
		j, jerr := json.Marshal(v)
		if jerr != nil {
			t.Fatal(jerr)
		}
		r.out[what] = string(j)
		r.errs[what] = err
		if err != nil && r.err == nil {
			r.err = err
		}
	}
	th := last.ThreadID
	for _, ns := range []string{"", "sub"} {
		tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns})
		note("latest "+ns, tup, err)
		if ns == last.CheckpointNS {
			tup, err = s.GetTuple(ctx, last)
			note("by id", tup, err)
		}
		h, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns}, []string{"w"})
		note("delta "+ns, h, err)
	}
	var ids []string
	var lerr error
	for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th}) {
		if err != nil {
			lerr = err
			break
		}
		ids = append(ids, tup.Config.CheckpointID)
	}
	note("list thread", ids, lerr)
	ids, lerr = nil, nil
	for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
		if err != nil {
			lerr = err
			break
		}
		ids = append(ids, tup.Config.CheckpointID)
	}
	note("list all", ids, lerr)
	// A copy reads the whole thread: what it copied, listed, is the source's
	// or it fails with ErrDataLoss. The copy goes away after.
	copies++
	target := fmt.Sprintf("copy-%d", copies)
	ids, lerr = nil, s.CopyThread(ctx, th, target)
	if lerr == nil {
		for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: target}) {
			if err != nil {
				lerr = err
				break
			}
			ids = append(ids, tup.Config.CheckpointNS+"/"+tup.Config.CheckpointID)
		}
		must(t, s.DeleteThread(ctx, target))
	}
	note("copy", ids, lerr)
	// What no read needs (the registry entry, an index for listings and
	// sweeps) the check reports.
	vs, err := violations(ctx, s, th)
	if err == nil && len(vs) > 0 {
		err = fmt.Errorf("%w: %v", checkpoint.ErrDataLoss, vs[0])
	}
	note("check", len(vs), err)
	return r
}

// TestPutRefusesNonsense: each refused Put writes nothing.
func TestPutRefusesNonsense(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			root := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": 1}, ChannelVersions: map[string]string{"a": "1"}}
			c1, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, root, nil, root.ChannelVersions)
			if err != nil {
				t.Fatal(err)
			}
			before := fmt.Sprint(footprint(t, rdb, keys.Of(s).Prefix()))
			other := checkpoint.NewID()
			for name, call := range map[string]func() error{
				"self parent": func() error {
					id := checkpoint.NewID()
					_, err := s.Put(ctx, checkpoint.Config{ThreadID: "t", CheckpointID: id}, checkpoint.Checkpoint{ID: id}, nil, nil)
					return err
				},
				"re-put with another parent": func() error {
					_, err := s.Put(ctx, checkpoint.Config{ThreadID: "t", CheckpointID: other}, root, nil, nil)
					return err
				},
				"newVersions disagree": func() error {
					cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": 2}, ChannelVersions: map[string]string{"a": "2"}}
					_, err := s.Put(ctx, c1, cp, nil, map[string]string{"a": "3"})
					return err
				},
				"newVersions name a channel without a version": func() error {
					cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": 2}}
					_, err := s.Put(ctx, c1, cp, nil, map[string]string{"a": "2"})
					return err
				},
				"string step": func() error {
					_, err := s.Put(ctx, c1, checkpoint.Checkpoint{ID: checkpoint.NewID()}, checkpoint.Metadata{"step": "3"}, nil)
					return err
				},
				"fractional step": func() error {
					_, err := s.Put(ctx, c1, checkpoint.Checkpoint{ID: checkpoint.NewID()}, checkpoint.Metadata{"step": 2.5}, nil)
					return err
				},
				"null step": func() error {
					_, err := s.Put(ctx, c1, checkpoint.Checkpoint{ID: checkpoint.NewID()}, checkpoint.Metadata{"step": nil}, nil)
					return err
				},
				"boolean step": func() error {
					_, err := s.Put(ctx, c1, checkpoint.Checkpoint{ID: checkpoint.NewID()}, checkpoint.Metadata{"step": true}, nil)
					return err
				},
			} {
				if err := call(); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
					t.Errorf("%s: %v, want ErrInvalidCheckpoint", name, err)
				}
			}
			if after := fmt.Sprint(footprint(t, rdb, keys.Of(s).Prefix())); after != before {
				t.Errorf("refused puts changed the footprint: %s -> %s", before, after)
			}
			// A float step that is an integer is fine.
			if _, err := s.Put(ctx, c1, checkpoint.Checkpoint{ID: checkpoint.NewID()}, checkpoint.Metadata{"step": 2.0}, nil); err != nil {
				t.Errorf("step 2.0: %v", err)
			}
		})
	}
}

// TestHugeEventsStoreWhole: with IncludeValues, a Put of 5,000 changed
// channels and a PutWrites of 10,000 writes store everything and publish
// one bounded event each.
func TestHugeEventsStoreWhole(t *testing.T) {
	rdb := redistest.Real(t)
	s := newSaver(t, rdb, redissaver.Options{Events: redissaver.Events{IncludeValues: true}})
	ctx := context.Background()
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
	for i := range 5000 {
		ch := fmt.Sprint("ch", i)
		cp.ChannelValues[ch], cp.ChannelVersions[ch] = i, "1"
	}
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "big"}, cp, nil, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	writes := make([]checkpoint.Write, 10000)
	for i := range writes {
		writes[i] = checkpoint.Write{Channel: fmt.Sprint("w", i), Value: i}
	}
	if err := s.PutWrites(ctx, cfg, writes, "task", ""); err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil || len(tup.Checkpoint.ChannelValues) != 5000 || len(tup.PendingWrites) != 10000 {
		t.Fatalf("read back: %d values, %d writes, %v", len(tup.Checkpoint.ChannelValues), len(tup.PendingWrites), err)
	}
	evs, err := rdb.XRange(ctx, keys.Of(s).Events("big"), "-", "+").Result()
	if err != nil || len(evs) != 2 {
		t.Fatalf("events: %d, %v", len(evs), err)
	}
	for _, ev := range evs {
		if n := len(ev.Values); n > 2*300 {
			t.Errorf("event %s carries %d fields", ev.Values["t"], n)
		}
	}
}

// TestMetaMismatch: a prefix remembers its format and shard count; a saver
// with another shard count, or a prefix of another format, is refused.
func TestMetaMismatch(t *testing.T) {
	_, rdb := redistest.Mini(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	if _, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4}); err != nil {
		t.Fatal(err)
	}
	_, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 16})
	if !errors.Is(err, checkpoint.ErrInvalidConfig) || !strings.Contains(err.Error(), "4 shards") {
		t.Errorf("shard mismatch: %v", err)
	}
	must(t, rdb.HSet(ctx, prefix+":meta", "format", "1").Err())
	_, err = redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4})
	if !errors.Is(err, checkpoint.ErrInvalidConfig) || !strings.Contains(err.Error(), "format") {
		t.Errorf("format mismatch: %v", err)
	}
}

// TestMetaKeyLost: New on a prefix whose meta key is gone while its shard
// registries list threads refuses it (ErrDataLoss) and writes nothing: a new
// meta key would let a saver of any shard count take the prefix. A prefix
// whose registries hold only their markers (a creation that stopped before
// the meta key) is completed.
func TestMetaKeyLost(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			ctx := context.Background()
			prefix := redistest.Prefix(t)
			opts := redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4}
			s, err := redissaver.New(ctx, rdb, opts)
			if err != nil {
				t.Fatal(err)
			}
			// Markers only: the meta key is written again.
			must(t, rdb.Del(ctx, prefix+":meta").Err())
			if _, err := redissaver.New(ctx, rdb, opts); err != nil {
				t.Fatalf("registries holding only their markers: %v", err)
			}
			if rdb.Exists(ctx, prefix+":meta").Val() != 1 {
				t.Fatal("the interrupted creation was not completed")
			}
			// A thread written, then the meta key lost: refused, for any
			// shard count, and the key stays absent.
			if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil); err != nil {
				t.Fatal(err)
			}
			must(t, rdb.Del(ctx, prefix+":meta").Err())
			for _, shards := range []int{4, 1} {
				o := opts
				o.Shards = shards
				_, err := redissaver.New(ctx, rdb, o)
				if !errors.Is(err, checkpoint.ErrDataLoss) || !strings.Contains(err.Error(), prefix+":meta") {
					t.Errorf("%d shards: %v, want ErrDataLoss naming the meta key", shards, err)
				}
			}
			if rdb.Exists(ctx, prefix+":meta").Val() != 0 {
				t.Error("New wrote the lost meta key again")
			}
		})
	}
}

// TestEvictionPolicy: New refuses a server that may evict keys without a
// TTL unless AcceptEviction is set; volatile-* policies and no memory limit
// are fine.
func TestEvictionPolicy(t *testing.T) {
	addr := redistest.StartServer(t, "--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru")
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	_, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "p"})
	if !errors.Is(err, checkpoint.ErrInvalidConfig) || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Errorf("allkeys-lru: %v", err)
	}
	if _, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "p", AcceptEviction: true}); err != nil {
		t.Errorf("allkeys-lru with AcceptEviction: %v", err)
	}
	must(t, rdb.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err())
	if _, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "p"}); err != nil {
		t.Errorf("volatile-lru: %v", err)
	}
	must(t, rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lfu").Err())
	must(t, rdb.ConfigSet(ctx, "maxmemory", "0").Err())
	if _, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "p"}); err != nil {
		t.Errorf("allkeys-lfu without a memory limit: %v", err)
	}
	_, mini := redistest.Mini(t)
	if _, err := redissaver.New(ctx, mini, redissaver.Options{Prefix: "p"}); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("a server whose policy cannot be read: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// storedBlobField returns the field of values hash key that holds the value
// of channel ch at version ver, mb.Blob(ch, ver), failing t when it is not
// there.
func storedBlobField(t *testing.T, rdb redis.UniversalClient, key, ch, ver string) string {
	t.Helper()
	f := mb.Blob(ch, ver)
	if n, err := rdb.HExists(context.Background(), key, f).Result(); err != nil || !n {
		t.Fatalf("no value of channel %q version %q in %s (%v)", ch, ver, key, err)
	}
	return f
}

// TestUnserializableWrapsBoth: a value the serializer refuses is
// ErrInvalidCheckpoint (nothing stored) and ErrSerialization (why).
func TestUnserializableWrapsBoth(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"c": make(chan int)}, ChannelVersions: map[string]string{"c": "1"}}
	_, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, cp, nil, map[string]string{"c": "1"})
	if !errors.Is(err, checkpoint.ErrInvalidCheckpoint) || !errors.Is(err, checkpoint.ErrSerialization) {
		t.Errorf("Put: %v", err)
	}
	ok := checkpoint.Checkpoint{ID: checkpoint.NewID()}
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, ok, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: func() {}}}, "task", "")
	if !errors.Is(err, checkpoint.ErrInvalidCheckpoint) || !errors.Is(err, checkpoint.ErrSerialization) {
		t.Errorf("PutWrites: %v", err)
	}
}

// TestUnstoredVersionReadsAbsent: LangGraph's contract lets a checkpoint
// name a channel version it does not write and that has no stored value;
// Put stores the empty marker for it, so the channel reads back absent
// (not ErrDataLoss), and a value stored later for that version is kept.
func TestUnstoredVersionReadsAbsent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := newSaver(t, b.client(t), redissaver.Options{})
			ctx := context.Background()
			cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": 1, "b": 2},
				ChannelVersions: map[string]string{"a": "1", "b": "1"}}
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, cp, nil, map[string]string{"a": "1"})
			if err != nil {
				t.Fatal(err)
			}
			tup, err := s.GetTuple(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tup.Checkpoint.ChannelValues["b"]; ok || tup.Checkpoint.ChannelValues["a"] != int64(1) || tup.Checkpoint.ChannelVersions["b"] != "1" {
				t.Errorf("values %v, versions %v: want a only, b versioned but absent", tup.Checkpoint.ChannelValues, tup.Checkpoint.ChannelVersions)
			}
			requireSound(t, s, "t")
		})
	}
}
