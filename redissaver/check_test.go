package redissaver_test

import (
	"context"
	"fmt"
	mb "github.com/graphstate/redcheck/internal/member"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// backends are the two tiers the check tests run on.
var backends = []struct {
	name   string
	client func(t *testing.T) redis.UniversalClient
}{
	{"miniredis", func(t *testing.T) redis.UniversalClient { _, c := redistest.Mini(t); return c }},
	{"redis", func(t *testing.T) redis.UniversalClient { return redistest.Real(t) }},
}

// requireSound fails the test when Verify finds a violation in s, and
// returns the result.
func requireSound(t testing.TB, s *redissaver.Saver, threadID string) *redissaver.CheckResult {
	t.Helper()
	res, err := s.Verify(context.Background(), threadID)
	if err != nil {
		t.Fatalf("Verify(%q): %v", threadID, err)
	}
	for _, v := range res.Violations {
		t.Errorf("Verify(%q): %v", threadID, v)
	}
	return res
}

// checkFixture is a small store written by fillCheckFixture: threads "t"
// and "other", namespaces "" and "sub" in each, a chain of three
// checkpoints in each namespace (those of "t" in ids[ns]), each with one
// pending write, all under run "r1".
type checkFixture struct {
	s   *redissaver.Saver
	rdb redis.UniversalClient
	l   keys.Layout
	ids map[string][]string
}

func fillCheckFixture(t *testing.T, rdb redis.UniversalClient, opts redissaver.Options) *checkFixture {
	t.Helper()
	s := newSaver(t, rdb, opts)
	ctx := context.Background()
	f := &checkFixture{s: s, rdb: rdb, l: keys.Of(s), ids: map[string][]string{}}
	for _, th := range []string{"t", "other"} {
		for _, ns := range []string{"", "sub"} {
			cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
			for i := range 3 {
				v := fmt.Sprint(i + 1)
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
					ChannelValues:   map[string]any{"msgs": []any{"m", i}, "cfg": "c"},
					ChannelVersions: map[string]string{"msgs": v, "cfg": "1"}}
				nv := map[string]string{"msgs": v}
				if i == 0 {
					nv["cfg"] = "1"
				}
				var err error
				cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i, "run_id": "r1"}, nv)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: i}}, "task", ""); err != nil {
					t.Fatal(err)
				}
				if th == "t" {
					f.ids[ns] = append(f.ids[ns], cp.ID)
				}
			}
		}
	}
	return f
}

// gen returns the current generation of thread "t".
func (f *checkFixture) gen() string {
	g, err := f.rdb.HGet(context.Background(), f.l.Head("t"), "g").Result()
	if err != nil {
		panic(err)
	}
	return g
}

// key helpers for the fixture.
func (f *checkFixture) cp(ns, id string) string { return f.l.Checkpoint("t", f.gen(), ns, id) }
func (f *checkFixture) member(ns, id string) string {
	return mb.Of(id, "t", ns, f.gen())
}

// finding is what a test expects of a Violation: its kind and place, and a
// piece of its detail.
type finding struct {
	kind, thread, ns, id, detail string
}

func (w finding) matches(v redissaver.Violation) bool {
	return v.Kind == w.kind && v.Thread == w.thread && v.Namespace == w.ns && v.CheckpointID == w.id &&
		strings.Contains(v.Detail, w.detail)
}

// expectExactly fails unless got and want match one to one.
func expectExactly(t *testing.T, what string, got []redissaver.Violation, want []finding) {
	t.Helper()
	left := slices.Clone(got)
	for _, w := range want {
		i := slices.IndexFunc(left, w.matches)
		if i < 0 {
			t.Errorf("%s: missing %+v", what, w)
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	for _, v := range left {
		t.Errorf("%s: unexpected %v", what, v)
	}
}

func TestCheckSound(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := fillCheckFixture(t, b.client(t), redissaver.Options{Shards: 4})
			res := requireSound(t, f.s, "")
			if res.Threads != 2 || res.Checkpoints != 12 || res.Writes != 12 || res.Values != 24 || res.Entries != 12+12 {
				t.Errorf("examined %+v; want 2 threads, 12 checkpoints, 12 writes, 24 values, 24 index entries", *res)
			}
			if len(res.Notes) != 0 {
				t.Errorf("notes on a sound store: %v", res.Notes)
			}
			one := requireSound(t, f.s, "t")
			if one.Threads != 1 || one.Checkpoints != 6 || one.Entries != 6+6 {
				t.Errorf("Verify(t) examined %+v; want 1 thread, 6 checkpoints, 12 entries", *one)
			}
			if vs, err := violations(context.Background(), f.s, "unknown"); err != nil || len(vs) != 0 {
				t.Errorf("Check(unknown) = %v, %v", vs, err)
			}
			if _, err := violations(context.Background(), f.s, strings.Repeat("x", 5000)); err == nil {
				t.Error("Check of an over-long thread id: no error")
			}
		})
	}
}

// TestCheckFindsCorruption breaks a sound store in one way per case and
// expects exactly the violations (and notes) that break causes, both from
// Check over every thread and from Check of thread "t".
func TestCheckFindsCorruption(t *testing.T) {
	type corruption struct {
		name   string
		break_ func(t *testing.T, f *checkFixture) (want, notes []finding)
	}
	ctx := context.Background()
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cases := []corruption{
		{name: "blob deleted", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			// "cfg" version 1 is shared by the three checkpoints of "sub".
			must(t, f.rdb.HDel(ctx, f.l.Blobs("t", f.gen(), "sub"), storedBlobField(t, f.rdb, f.l.Blobs("t", f.gen(), "sub"), "cfg", "1")).Err())
			var want []finding
			for _, id := range f.ids["sub"] {
				want = append(want, finding{redissaver.KindMissingBlob, "t", "sub", id, `channel "cfg" version "1"`})
			}
			return want, nil
		}},
		{name: "checkpoint hash deleted", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			id := f.ids[""][1]
			must(t, f.rdb.Del(ctx, f.cp("", id)).Err())
			return []finding{
					{redissaver.KindMissingCheckpoint, "t", "", id, "namespace index"},
					{redissaver.KindMissingCheckpoint, "t", "", id, "thread index"},
					{redissaver.KindMissingCheckpoint, "t", "", id, "shard index"},
					{redissaver.KindMissingCheckpoint, "t", "", id, `run index "` + f.l.Run(f.l.Shard("t"), "r1")},
				}, []finding{
					{redissaver.KindDanglingParent, "t", "", f.ids[""][2], id},
				}
		}},
		{name: "bogus index entries", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			n := f.l.Shard("t")
			must(t, f.rdb.ZAdd(ctx, f.l.Index("t", f.gen(), "sub"), redis.Z{Member: "bogus"}).Err())
			must(t, f.rdb.ZAdd(ctx, f.l.ThreadIndex("t", f.gen()), redis.Z{Member: "no-separator"}).Err())
			must(t, f.rdb.ZAdd(ctx, f.l.All(n), redis.Z{Member: f.member("", "ghost")}).Err())
			must(t, f.rdb.SAdd(ctx, f.l.Run(n, "r1"), f.member("sub", "phantom")).Err())
			return []finding{
				{redissaver.KindMissingCheckpoint, "t", "sub", "bogus", "namespace index"},
				{redissaver.KindBadEntry, "t", "", "", `thread index member "no-separator"`},
				{redissaver.KindMissingCheckpoint, "t", "", "ghost", "shard index"},
				{redissaver.KindMissingCheckpoint, "t", "sub", "phantom", "run index"},
			}, nil
		}},
		{name: "bad writes", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			id := f.ids["sub"][0]
			must(t, f.rdb.HSet(ctx, f.cp("sub", id), "w:garbage", "x").Err())
			must(t, f.rdb.HSet(ctx, f.cp("sub", id), "w:4:task:7", "1:w0:7:msgpack\xc1").Err())
			return []finding{
				{redissaver.KindBadWrite, "t", "sub", id, `"w:garbage"`},
				{redissaver.KindBadWrite, "t", "sub", id, `"w:4:task:7"`},
			}, nil
		}},
		{name: "bad value and header", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			id := f.ids[""][2]
			must(t, f.rdb.HSet(ctx, f.l.Blobs("t", f.gen(), ""), storedBlobField(t, f.rdb, f.l.Blobs("t", f.gen(), ""), "msgs", "3"), "not packed").Err())
			must(t, f.rdb.HSet(ctx, f.cp("", id), "s", "{not json", "m:step", "{").Err())
			return []finding{
				{redissaver.KindBadValue, "t", "", id, `channel "msgs" version "3"`},
				{redissaver.KindBadCheckpoint, "t", "", id, "versions seen"},
				{redissaver.KindBadCheckpoint, "t", "", id, `metadata "step"`},
			}, nil
		}},
		{name: "writes without a checkpoint", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			must(t, f.rdb.ZAdd(ctx, f.l.Index("t", f.gen(), ""), redis.Z{Member: "orphan"}).Err())
			must(t, f.rdb.ZAdd(ctx, f.l.ThreadIndex("t", f.gen()), redis.Z{Member: "orphan" + mb.Sep}).Err())
			must(t, f.rdb.ZAdd(ctx, f.l.All(f.l.Shard("t")), redis.Z{Member: f.member("", "orphan")}).Err())
			must(t, f.rdb.HSet(ctx, f.cp("", "orphan"), "w:4:task:0", "1:w0:4:json1").Err())
			return []finding{{redissaver.KindBadCheckpoint, "t", "", "orphan", "no format version"}}, nil
		}},
		{name: "index entries removed", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			n := f.l.Shard("t")
			a, b := f.ids[""][0], f.ids["sub"][2]
			must(t, f.rdb.ZRem(ctx, f.l.All(n), f.member("", a)).Err())
			must(t, f.rdb.SRem(ctx, f.l.Run(n, "r1"), f.member("", a)).Err())
			must(t, f.rdb.ZRem(ctx, f.l.Index("t", f.gen(), "sub"), b).Err())
			must(t, f.rdb.ZRem(ctx, f.l.ThreadIndex("t", f.gen()), b+mb.Sep+"sub").Err())
			must(t, f.rdb.SRem(ctx, f.l.Namespaces("t", f.gen()), "sub").Err())
			return []finding{
				{redissaver.KindMissingIndexEntry, "t", "", a, "shard index"},
				{redissaver.KindMissingIndexEntry, "t", "", a, "run index"},
				// b is named by no index of its thread any more: the shard
				// index finds it.
				{redissaver.KindMissingIndexEntry, "t", "sub", b, "namespace index"},
				{redissaver.KindMissingIndexEntry, "t", "sub", b, "thread index"},
				{redissaver.KindMissingIndexEntry, "t", "sub", "", "namespace set"},
			}, nil
		}},
		{name: "thread unregistered", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			must(t, f.rdb.ZRem(ctx, f.l.Threads(f.l.Shard("t")), "t").Err())
			return []finding{{redissaver.KindLostKey, "t", "", "", "DATALOSS registry entry"}}, nil
		}},
		{name: "ghost thread registered", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			ghost := "ghost"
			must(t, f.rdb.ZAdd(ctx, f.l.Threads(f.l.Shard(ghost)), redis.Z{Member: ghost}).Err())
			wrong := (f.l.Shard(ghost) + 1) % f.l.Shards()
			must(t, f.rdb.ZAdd(ctx, f.l.Threads(wrong), redis.Z{Member: ghost}, redis.Z{Member: "%zz"}).Err())
			return []finding{
				// A registry entry without a head: the head was lost.
				{redissaver.KindLostKey, ghost, "", "", "DATALOSS thread head"},
				{redissaver.KindBadEntry, ghost, "", "", fmt.Sprintf("registry of shard %d", wrong)},
				{redissaver.KindBadEntry, "", "", "", `"%zz"`},
			}, nil
		}},
		{name: "stale run entry", break_: func(t *testing.T, f *checkFixture) ([]finding, []finding) {
			n := f.l.Shard("t")
			id := f.ids["sub"][1]
			// The checkpoint moves to run r2 but r1 still names it.
			must(t, f.rdb.HSet(ctx, f.cp("sub", id), "r", f.l.Run(n, "r2")).Err())
			must(t, f.rdb.SAdd(ctx, f.l.Run(n, "r2"), f.member("sub", id)).Err())
			return []finding{{redissaver.KindStaleEntry, "t", "sub", id, "belongs to run index"}}, nil
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			for _, tc := range cases {
				t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
					f := fillCheckFixture(t, rdb, redissaver.Options{Shards: 4})
					requireSound(t, f.s, "")
					want, notes := tc.break_(t, f)
					all, err := f.s.Verify(ctx, "")
					if err != nil {
						t.Fatal(err)
					}
					expectExactly(t, "violations of every thread", all.Violations, want)
					expectExactly(t, "notes of every thread", all.Notes, notes)
					one, err := f.s.Verify(ctx, "t")
					if err != nil {
						t.Fatal(err)
					}
					var wantOne []finding
					for _, w := range want {
						if w.thread == "t" {
							wantOne = append(wantOne, w)
						}
					}
					expectExactly(t, "violations of thread t", one.Violations, wantOne)
					if other := requireSound(t, f.s, "other"); other.Checkpoints != 6 {
						t.Errorf("thread other: %d checkpoints", other.Checkpoints)
					}
				})
			}
		})
	}
}

func TestViolationString(t *testing.T) {
	for _, c := range []struct {
		v    redissaver.Violation
		want string
	}{
		{redissaver.Violation{Kind: "missing blob", Thread: "t", Namespace: "", CheckpointID: "1", Detail: "d"}, `missing blob: thread "t" ns "" checkpoint 1: d`},
		{redissaver.Violation{Kind: "bad entry", Detail: "registry"}, `bad entry: registry`},
		{redissaver.Violation{Kind: "stale entry", Thread: "a\nb", Namespace: "n"}, `stale entry: thread "a\nb" ns "n"`},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

// TestCheckNotes: what DeleteForRuns and Prune leave behind are notes, and
// with a TTL expired entries are notes too.
func TestCheckNotes(t *testing.T) {
	ctx := context.Background()
	mr, rdb := redistest.Mini(t)
	f := fillCheckFixture(t, rdb, redissaver.Options{Shards: 2})
	// Put a child under run r2 of the last checkpoint, then delete run r1.
	parent := f.ids[""][2]
	child := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelVersions: map[string]string{"x": "1"}}
	if _, err := f.s.Put(ctx, checkpoint.Config{ThreadID: "t", CheckpointID: parent}, child, checkpoint.Metadata{"run_id": "r2"}, map[string]string{"x": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteForRuns(ctx, []string{"r1"}); err != nil {
		t.Fatal(err)
	}
	res := requireSound(t, f.s, "")
	expectExactly(t, "notes after DeleteForRuns", res.Notes, []finding{{redissaver.KindDanglingParent, "t", "", child.ID, parent}})
	if res.Checkpoints != 1 {
		t.Errorf("%d checkpoints left, want 1", res.Checkpoints)
	}

	// With a TTL, a checkpoint that expired before its index entries is a
	// note, not a violation.
	g := fillCheckFixture(t, rdb, redissaver.Options{Shards: 2, TTL: time.Hour})
	requireSound(t, g.s, "")
	id := g.ids["sub"][0]
	mr.Del(g.cp("sub", id))
	res = requireSound(t, g.s, "")
	var want []finding
	for _, index := range []string{"the namespace index", "the thread index", "the shard index", "run index"} {
		want = append(want, finding{redissaver.KindExpired, "t", "sub", id, redissaver.KindMissingCheckpoint + ": named by " + index})
	}
	// Its child now has a dangling parent.
	want = append(want, finding{redissaver.KindDanglingParent, "t", "sub", g.ids["sub"][1], id})
	expectExactly(t, "notes after an expiry", res.Notes, want)
}

// TestCheckAfterConformance runs the whole conformance kit and checks every
// group's store afterwards: whatever the kit does (deletes, prunes, copies,
// odd names, re-puts), it leaves no violation.
func TestCheckAfterConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			checkpointtest.Run(t, checkedSaver(rdb, redissaver.Options{Shards: 3}))
		})
	}
}

// checkedSaver returns a kit factory whose savers are checked for
// violations when their group ends.
func checkedSaver(rdb redis.UniversalClient, opts redissaver.Options) func(t *testing.T) checkpoint.Saver {
	return func(t *testing.T) checkpoint.Saver {
		s := newSaver(t, rdb, opts)
		t.Cleanup(func() {
			res, err := s.Verify(context.Background(), "")
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			for _, v := range res.Violations {
				t.Errorf("Verify: %v", v)
			}
			t.Logf("check: %d threads, %d checkpoints, %d writes, %d values, %d entries, %d notes",
				res.Threads, res.Checkpoints, res.Writes, res.Values, res.Entries, len(res.Notes))
		})
		return s
	}
}

// TestCheckRunIndexOutlivedByCheckpoint: with a TTL, a run index must live
// as long as the checkpoints it names, or DeleteForRuns misses them.
// PutWrites (and a read with RefreshOnRead) extend a checkpoint's TTL and
// its run index's with it (a regression test: they once did not).
func TestCheckRunIndexOutlivedByCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, refresh := range []string{"PutWrites", "GetTuple"} {
		t.Run(refresh, func(t *testing.T) {
			mr, rdb := redistest.Mini(t)
			s := newSaver(t, rdb, redissaver.Options{TTL: time.Hour, RefreshOnRead: true})
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, checkpoint.Checkpoint{ID: checkpoint.NewID()}, checkpoint.Metadata{"run_id": "r1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			mr.FastForward(50 * time.Minute)
			if refresh == "PutWrites" {
				err = s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "a", Value: 1}}, "task", "")
			} else {
				_, err = s.GetTuple(ctx, cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			mr.FastForward(20 * time.Minute) // the checkpoint has 40 minutes left
			res := requireSound(t, s, "")
			for _, n := range res.Notes {
				t.Errorf("after a %s refresh: %v", refresh, n)
			}
			if err := s.DeleteForRuns(ctx, []string{"r1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetTuple(ctx, cfg); err == nil {
				t.Errorf("after a %s refresh, the checkpoint of run r1 survived DeleteForRuns", refresh)
			}
		})
	}
}

// midCheck is a go-redis hook that runs fire once, just before the first
// check_thread.lua page of checkpoints ("cps") is sent: a deletion by
// another client between two pages of one read of a thread.
type midCheck struct {
	fire  func()
	fired atomic.Bool
}

func (h *midCheck) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *midCheck) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && slices.Contains(cmd.Args(), any("cps")) &&
			h.fired.CompareAndSwap(false, true) {
			h.fire()
		}
		return next(ctx, cmd)
	}
}

func (h *midCheck) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestCheckDuringDeletion: a DeleteForRuns or a Prune between two pages of
// a check's read of a thread leaves that read index entries whose
// checkpoints are gone by the next page. Nothing was lost, so Verify reports
// nothing: it reads a thread with findings again, and reports only what
// every read finds. (Before, it reported each deleted checkpoint as missing.)
func TestCheckDuringDeletion(t *testing.T) {
	for _, b := range backends {
		for _, del := range []struct {
			name string
			run  func(ctx context.Context, s *redissaver.Saver) error
		}{
			{"delete for runs", func(ctx context.Context, s *redissaver.Saver) error { return s.DeleteForRuns(ctx, []string{"r1"}) }},
			{"prune keep latest", func(ctx context.Context, s *redissaver.Saver) error {
				return s.Prune(ctx, []string{"t"}, checkpoint.PruneKeepLatest)
			}},
		} {
			t.Run(b.name+"/"+del.name, func(t *testing.T) {
				ctx := context.Background()
				rdb := b.client(t)
				f := fillCheckFixture(t, rdb, redissaver.Options{})
				// A checkpoint of another run keeps thread "t" alive through
				// the DeleteForRuns.
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"x": 1}, ChannelVersions: map[string]string{"x": "1"}}
				if _, err := f.s.Put(ctx, checkpoint.Config{ThreadID: "t", CheckpointNS: "other"}, cp,
					checkpoint.Metadata{"run_id": "r2"}, map[string]string{"x": "1"}); err != nil {
					t.Fatal(err)
				}
				h := &midCheck{fire: func() {
					if err := del.run(ctx, f.s); err != nil {
						t.Errorf("%s: %v", del.name, err)
					}
				}}
				rdb.AddHook(h)
				requireSound(t, f.s, "t")
				if !h.fired.Load() {
					t.Fatal("the check read no page of checkpoints")
				}
				requireSound(t, f.s, "")
			})
		}
	}
}
