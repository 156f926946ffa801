package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// rawState lists every key of prefix but the meta key with its type and, for
// hashes, its fields, sorted: what a call wrote, field by field.
func rawState(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	ks, err := rdb.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range ks {
		typ := rdb.Type(ctx, k).Val()
		if typ != "hash" {
			out = append(out, k+" "+typ)
			continue
		}
		for _, f := range rdb.HKeys(ctx, k).Val() {
			out = append(out, fmt.Sprintf("%s %q", k, f))
		}
	}
	slices.Sort(out)
	return out
}

// stagedStep puts checkpoint i of a chain on thread th: channel "a" changes
// at every step, "b" keeps version 1.
func stagedStep(t *testing.T, s *redissaver.Saver, parent checkpoint.Config, i int) checkpoint.Config {
	t.Helper()
	ver := fmt.Sprint(i + 1)
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(),
		ChannelValues:   map[string]any{"a": fmt.Sprint("value ", i), "b": "kept"},
		ChannelVersions: map[string]string{"a": ver, "b": "1"}}
	nv := map[string]string{"a": ver}
	if i == 0 {
		nv["b"] = "1"
	}
	cfg, err := s.Put(context.Background(), parent, cp, checkpoint.Metadata{"step": i}, nv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// stagedChain puts n checkpoints of stagedStep's chain on thread th and
// returns the last.
func stagedChain(t *testing.T, s *redissaver.Saver, th string, n int) checkpoint.Config {
	t.Helper()
	cfg := checkpoint.Config{ThreadID: th}
	for i := range n {
		cfg = stagedStep(t, s, cfg, i)
	}
	return cfg
}

// TestStagedValues: once a saver knows a thread's generation, a Put writes
// its values by plain HSET in the same transaction as put.lua, under fields
// qualified by its call token; they read back as any other value, and an
// unchanged channel points to the value its parent points to.
func TestStagedValues(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			cfg := stagedChain(t, s, "t", 4)
			tup, err := s.GetTuple(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := tup.Checkpoint.ChannelVersions; got["a"] != "4" || got["b"] != "1" {
				t.Errorf("versions %v, want a=4 b=1", got)
			}
			if got := tup.Checkpoint.ChannelValues; got["a"] != "value 3" || got["b"] != "kept" {
				t.Errorf("values %v", got)
			}
			staged := 0
			for _, line := range rawState(t, rdb, keys.Of(s).Prefix()) {
				if strings.Contains(line, ":blobs ") && strings.Contains(line, `\x00`) {
					staged++
				}
			}
			if staged != 5 { // the first Put of the thread stages its values too
				t.Errorf("%d staged values, want 5", staged)
			}
			requireSound(t, s, "t")
		})
	}
}

// requireUnstaged checks that no stage key is left under the saver's prefix
// and that the values hash of thread th carries no TTL.
func requireUnstaged(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver, th string) {
	t.Helper()
	ctx := context.Background()
	l := keys.Of(s)
	gen := rdb.HGet(ctx, l.Head(th), "g").Val()
	if ttl := rdb.PTTL(ctx, l.Blobs(th, gen, "")).Val(); ttl != -1 {
		t.Errorf("the values hash has a TTL: %v", ttl)
	}
	for _, line := range rawState(t, rdb, l.Prefix()) {
		if strings.Contains(line, ":stage:") {
			t.Errorf("stage key left: %s", line)
		}
	}
}

// TestStagedNewThread: a root Put to a thread the saver does not know
// stages its values too, to a stage key (with a TTL) for the generation it
// proposes, which put.lua renames to that generation's values hash in the
// same transaction: one round trip, every value staged, no stage key and no
// TTL left. When the thread exists after all (another saver wrote it), the
// script moves the staged values into its live generation: one round trip
// too. A refusal leaves nothing behind.
func TestStagedNewThread(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			rec := &txRecorder{}
			rdb.AddHook(rec)
			ctr := redistest.CountRoundTrips(rdb)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			l := keys.Of(s)
			stagedValues := func(th string) int {
				gen := rdb.HGet(ctx, l.Head(th), "g").Val()
				n := 0
				for _, f := range rdb.HKeys(ctx, l.Blobs(th, gen, "")).Val() {
					if strings.Contains(f, "\x00") {
						n++
					}
				}
				return n
			}
			must(t, s.LoadScripts(ctx))

			ctr.Reset()
			rec.txs = nil
			c1 := stagedStep(t, s, checkpoint.Config{ThreadID: "t"}, 0)
			if n := ctr.Load(); n != 1 {
				t.Errorf("a new thread's first Put: %d round trips, want 1", n)
			}
			if len(rec.txs) != 1 || !slices.Equal(rec.txs[0], []string{"multi", "hset", "pexpire", "evalsha", "exec"}) {
				t.Errorf("a new thread's first Put sent %v, want one MULTI of HSET, PEXPIRE, EVALSHA", rec.txs)
			}
			if n := stagedValues("t"); n != 2 {
				t.Errorf("%d staged values, want 2", n)
			}
			requireUnstaged(t, rdb, s, "t")
			gen := rdb.HGet(ctx, l.Head("t"), "g").Val()
			tup, err := s.GetTuple(ctx, c1)
			if err != nil || tup.Checkpoint.ChannelValues["a"] != "value 0" || tup.Checkpoint.ChannelValues["b"] != "kept" {
				t.Fatalf("GetTuple: %+v, %v", tup, err)
			}

			// Another saver, which does not know the thread, puts a root
			// checkpoint into it: the thread has a generation, so the script
			// moves the staged values into it (through Lua, as values sent
			// in its arguments would go): still one round trip.
			other, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: l.Prefix(), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			ctr.Reset()
			root := stagedStep(t, other, checkpoint.Config{ThreadID: "t"}, 0)
			if n := ctr.Load(); n != 1 {
				t.Errorf("a root Put into a thread the saver does not know: %d round trips, want 1", n)
			}
			if rdb.HGet(ctx, l.Head("t"), "g").Val() != gen {
				t.Error("the thread's generation changed")
			}
			if n := stagedValues("t"); n != 4 {
				t.Errorf("%d staged values, want 4", n)
			}
			requireUnstaged(t, rdb, s, "t")
			if tup, err := other.GetTuple(ctx, root); err != nil || tup.Checkpoint.ChannelValues["a"] != "value 0" || tup.Checkpoint.ChannelValues["b"] != "kept" {
				t.Fatalf("GetTuple of the second root: %+v, %v", tup, err)
			}
			requireSound(t, s, "t")

			// A third saver re-puts c1 (same id, no parent, same versions):
			// its staged values are dropped for the ones stored, and the
			// stage key, left empty, goes.
			third, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: l.Prefix(), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			ctr.Reset()
			re := checkpoint.Checkpoint{V: 4, ID: c1.CheckpointID, ChannelValues: map[string]any{"a": "value 0", "b": "kept"},
				ChannelVersions: map[string]string{"a": "1", "b": "1"}}
			if _, err := third.Put(ctx, checkpoint.Config{ThreadID: "t"}, re, checkpoint.Metadata{"step": 0}, re.ChannelVersions); err != nil {
				t.Fatal(err)
			}
			if n := ctr.Load(); n != 1 {
				t.Errorf("a re-put into a thread the saver does not know: %d round trips, want 1", n)
			}
			if n := stagedValues("t"); n != 4 {
				t.Errorf("%d staged values after the re-put, want still 4", n)
			}
			if tup, err := third.GetTuple(ctx, c1); err != nil || tup.Checkpoint.ChannelValues["a"] != "value 0" || tup.Checkpoint.ChannelValues["b"] != "kept" {
				t.Fatalf("GetTuple of the re-put: %+v, %v", tup, err)
			}
			requireUnstaged(t, rdb, s, "t")
			requireSound(t, s, "t")

			// A thread whose head is lost while its registry entry stays:
			// ErrDataLoss, and the stage key goes.
			stagedStep(t, other, checkpoint.Config{ThreadID: "lost"}, 0)
			must(t, rdb.Del(ctx, l.Head("lost")).Err())
			before := rawState(t, rdb, l.Prefix())
			fresh, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: l.Prefix(), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "x"}, ChannelVersions: map[string]string{"a": "1"}}
			if _, err := fresh.Put(ctx, checkpoint.Config{ThreadID: "lost"}, cp, nil, map[string]string{"a": "1"}); !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Errorf("Put to a thread whose head is lost: %v, want ErrDataLoss", err)
			}
			if after := rawState(t, rdb, l.Prefix()); !slices.Equal(before, after) {
				t.Errorf("a refused Put changed the keys:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// txResender sends every transaction that queues a PEXPIRE (a new thread's
// staged Put) twice, as a client sending it again after a lost reply would.
type txResender struct{ resent int }

func (r *txResender) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (r *txResender) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (r *txResender) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "pexpire" }) {
			if err := next(ctx, cmds); err != nil {
				return err
			}
			r.resent++
		}
		return next(ctx, cmds)
	}
}

// TestStagedNewThreadResent: a new thread's staged Put sent twice (the
// second time after the first ran) finds its checkpoint stored: one
// checkpoint, one event, no stage key, and no TTL on the values hash, which
// the second transaction's PEXPIRE named only as the stage key.
func TestStagedNewThreadResent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			r := &txResender{}
			rdb.AddHook(r)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			l := keys.Of(s)
			c1 := stagedStep(t, s, checkpoint.Config{ThreadID: "t"}, 0)
			if r.resent != 1 {
				t.Fatalf("%d transactions sent twice, want 1", r.resent)
			}
			if n := rdb.XLen(ctx, l.Events("t")).Val(); n != 1 {
				t.Errorf("%d events, want 1", n)
			}
			requireUnstaged(t, rdb, s, "t")
			c2 := stagedStep(t, s, c1, 1)
			tup, err := s.GetTuple(ctx, c2)
			if err != nil || tup.Checkpoint.ChannelValues["a"] != "value 1" || tup.Checkpoint.ChannelValues["b"] != "kept" {
				t.Fatalf("GetTuple: %+v, %v", tup, err)
			}
			if n := count(t, s, "t"); n != 2 {
				t.Errorf("%d checkpoints, want 2", n)
			}
			requireSound(t, s, "t")
		})
	}
}

// TestStagedRefusalWritesNothing: a Put refused by put.lua after its values
// were staged leaves every key as it was, field for field.
func TestStagedRefusalWritesNothing(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			c1 := stagedStep(t, s, checkpoint.Config{ThreadID: "t"}, 0)
			c2 := stagedStep(t, s, c1, 1)
			before := rawState(t, rdb, keys.Of(s).Prefix())
			// Re-put c2 under another parent, with new values: REPARENT.
			cp := checkpoint.Checkpoint{V: 4, ID: c2.CheckpointID, ChannelValues: map[string]any{"a": "other"},
				ChannelVersions: map[string]string{"a": "9"}}
			_, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, cp, nil, map[string]string{"a": "9"})
			if !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
				t.Fatalf("re-put under another parent: %v, want ErrInvalidCheckpoint", err)
			}
			if after := rawState(t, rdb, keys.Of(s).Prefix()); !slices.Equal(before, after) {
				t.Errorf("a refused staged Put changed the keys:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// TestStagedRePutPointsToStoredValues: a re-put of a checkpoint (same id,
// same parent, same versions) through staging points to the values already
// stored and leaves no second copy.
func TestStagedRePutPointsToStoredValues(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			c1 := stagedStep(t, s, checkpoint.Config{ThreadID: "t"}, 0)
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "x", "b": "kept"},
				ChannelVersions: map[string]string{"a": "2", "b": "1"}}
			if _, err := s.Put(ctx, c1, cp, nil, map[string]string{"a": "2"}); err != nil {
				t.Fatal(err)
			}
			before := rawState(t, rdb, keys.Of(s).Prefix())
			cfg, err := s.Put(ctx, c1, cp, nil, map[string]string{"a": "2"}) // a new call: a new token
			if err != nil {
				t.Fatal(err)
			}
			var blobs []string
			for _, line := range rawState(t, rdb, keys.Of(s).Prefix()) {
				if strings.Contains(line, ":blobs ") {
					blobs = append(blobs, line)
				}
			}
			var was []string
			for _, line := range before {
				if strings.Contains(line, ":blobs ") {
					was = append(was, line)
				}
			}
			if !slices.Equal(blobs, was) {
				t.Errorf("values after the re-put %q, before %q", blobs, was)
			}
			tup, err := s.GetTuple(ctx, cfg)
			if err != nil || tup.Checkpoint.ChannelValues["a"] != "x" {
				t.Fatalf("GetTuple: %v, %v", tup, err)
			}
			requireSound(t, s, "t")
		})
	}
}

// TestStagedRePutWithoutNewVersions: a re-put naming the versions its
// checkpoint already names, none of them new (its parent names none of
// them: a root), points where the checkpoint did. It read them back absent
// before: the values its first Put staged are stored under version \0
// token, and the re-put pointed to the plain versions (the differential
// model found it).
func TestStagedRePutWithoutNewVersions(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := newSaver(t, b.client(t), redissaver.Options{})
			ctx := context.Background()
			versions := map[string]string{"a": "1", "b": "1", "e": "1"}
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "x", "b": "y"},
				ChannelVersions: versions}
			for i, nv := range []map[string]string{versions, {}} {
				cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, cp, nil, nv)
				if err != nil {
					t.Fatal(err)
				}
				tup, err := s.GetTuple(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if got := tup.Checkpoint.ChannelValues; len(got) != 2 || got["a"] != "x" || got["b"] != "y" {
					t.Fatalf("put %d: values %v, want a and b (e was stored empty)", i, got)
				}
			}
			requireSound(t, s, "t")
		})
	}
}

// TestStagedStaleGeneration: a saver whose remembered generation is stale
// (another saver deleted the thread and wrote it again) stages its values
// into the old generation; put.lua takes them back, and the Put goes
// through the script into the live generation.
func TestStagedStaleGeneration(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			a := newSaver(t, rdb, redissaver.Options{})
			other, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: keys.Of(a).Prefix(), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			c1 := stagedStep(t, a, checkpoint.Config{ThreadID: "t"}, 0)
			stagedStep(t, a, c1, 1) // a remembers the generation
			if err := other.DeleteThread(ctx, "t"); err != nil {
				t.Fatal(err)
			}
			n1 := stagedStep(t, other, checkpoint.Config{ThreadID: "t"}, 0)
			live := rawState(t, rdb, keys.Of(a).Prefix())
			cfg := stagedStep(t, a, n1, 1)
			tup, err := a.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
			if err != nil || tup.Config.CheckpointID != cfg.CheckpointID || tup.Checkpoint.ChannelValues["a"] != "value 1" ||
				tup.Checkpoint.ChannelValues["b"] != "kept" {
				t.Fatalf("latest after the stale Put: %+v, %v", tup, err)
			}
			// Nothing but the new checkpoint's keys, entries and value appeared:
			// no value stayed in the old generation.
			gen := rdb.HGet(ctx, keys.Of(a).Head("t"), "g").Val()
			newValue := keys.Of(a).Blobs("t", gen, "") + " "
			for _, line := range rawState(t, rdb, keys.Of(a).Prefix()) {
				if !slices.Contains(live, line) && !strings.Contains(line, cfg.CheckpointID) &&
					!strings.HasPrefix(line, newValue) && !strings.Contains(line, "events") && !strings.Contains(line, "feed") {
					t.Errorf("unexpected after the stale Put: %s", line)
				}
			}
			requireSound(t, a, "t")
		})
	}
}

// TestStagedAfterScriptFlush: a transaction whose script Redis lacks
// (NOSCRIPT: it did not run) is sent again once the script is loaded.
func TestStagedAfterScriptFlush(t *testing.T) {
	rdb := backends[1].client(t)
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	cfg := stagedStep(t, s, checkpoint.Config{ThreadID: "t"}, 0)
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	cfg = stagedStep(t, s, cfg, 1)
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil || tup.Checkpoint.ChannelValues["a"] != "value 1" {
		t.Fatalf("GetTuple: %+v, %v", tup, err)
	}
	requireSound(t, s, "t")
}

// txRecorder records the commands of every transaction a client sends.
type txRecorder struct{ txs [][]string }

func (r *txRecorder) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (r *txRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (r *txRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "multi" {
			var names []string
			for _, c := range cmds {
				names = append(names, c.Name())
			}
			r.txs = append(r.txs, names)
		}
		return next(ctx, cmds)
	}
}

// TestPredictedRead: GetTuple of the checkpoint the saver last wrote reads
// its values by HMGET in the same transaction as the reads that confirm the
// prediction; a wrong prediction (another saver wrote since, or deleted the
// thread) still gets the right answer, and a value lost is ErrDataLoss
// (TestPlainConfirmation has every case of the confirmation).
func TestPredictedRead(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			rec := &txRecorder{}
			rdb.AddHook(rec)
			a := newSaver(t, rdb, redissaver.Options{})
			other, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: keys.Of(a).Prefix(), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			c1 := stagedStep(t, a, checkpoint.Config{ThreadID: "t"}, 0)
			c2 := stagedStep(t, a, c1, 1)
			must(t, a.LoadScripts(ctx))
			rec.txs = nil
			for _, cfg := range []checkpoint.Config{{ThreadID: "t"}, c2} {
				tup, err := a.GetTuple(ctx, cfg)
				if err != nil || tup.Config.CheckpointID != c2.CheckpointID || tup.Checkpoint.ChannelValues["a"] != "value 1" ||
					tup.Checkpoint.ChannelValues["b"] != "kept" {
					t.Fatalf("GetTuple %v: %+v, %v", cfg, tup, err)
				}
			}
			if len(rec.txs) != 2 || !slices.Contains(rec.txs[0], "hmget") {
				t.Errorf("transactions %v, want 2 with an HMGET", rec.txs)
			}

			// Another saver writes a newer checkpoint: the prediction is wrong.
			c3 := stagedStep(t, other, c2, 2)
			tup, err := a.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
			if err != nil || tup.Config.CheckpointID != c3.CheckpointID || tup.Checkpoint.ChannelValues["a"] != "value 2" {
				t.Fatalf("latest after another saver's Put: %+v, %v", tup, err)
			}
			// The thread is deleted and written again with the same ids.
			if err := other.DeleteThread(ctx, "t"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.GetTuple(ctx, checkpoint.Config{ThreadID: "t"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("latest of a deleted thread: %v, want ErrNotFound", err)
			}
			// A predicted value lost: ErrDataLoss.
			d1 := stagedStep(t, a, checkpoint.Config{ThreadID: "u"}, 0)
			d2 := stagedStep(t, a, d1, 1)
			gen := rdb.HGet(ctx, keys.Of(a).Head("u"), "g").Val()
			key := keys.Of(a).Blobs("u", gen, "")
			must(t, rdb.HDel(ctx, key, storedBlobField(t, rdb, key, "a", "2")).Err())
			if _, err := a.GetTuple(ctx, d2); !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Fatalf("a lost value: %v, want ErrDataLoss", err)
			}
		})
	}
}

// TestPredictedReadByID: a checkpoint a saver read by id, or listed, is
// read again by id with its values by HMGET in the transaction (predicted),
// and a Put forking from it knows its pointers; a prediction made wrong by
// a re-put still gets the right answer.
func TestPredictedReadByID(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			rec := &txRecorder{}
			rdb.AddHook(rec)
			a := newSaver(t, rdb, redissaver.Options{})
			r, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: keys.Of(a).Prefix(), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			c1 := stagedStep(t, a, checkpoint.Config{ThreadID: "t"}, 0)
			c2 := stagedStep(t, a, c1, 1)
			stagedStep(t, a, c2, 2)
			must(t, a.LoadScripts(ctx))
			predicted := func(what string, cfg checkpoint.Config, want bool, value string) {
				t.Helper()
				rec.txs = nil
				tup, err := r.GetTuple(ctx, cfg)
				if err != nil || tup.Config.CheckpointID != cfg.CheckpointID || tup.Checkpoint.ChannelValues["a"] != value ||
					tup.Checkpoint.ChannelValues["b"] != "kept" {
					t.Fatalf("%s: %+v, %v", what, tup, err)
				}
				if got := len(rec.txs) == 1 && slices.Contains(rec.txs[0], "hmget"); got != want {
					t.Errorf("%s: predicted %v, want %v (transactions %v)", what, got, want, rec.txs)
				}
			}
			predicted("first read of c2 by id", c2, false, "value 1")
			predicted("second read of c2 by id", c2, true, "value 1")
			for _, err := range r.List(ctx, checkpoint.ListQuery{ThreadID: "t"}) {
				must(t, err)
			}
			predicted("c1 by id after a List", c1, true, "value 0")

			// With ReadHints negative, a saver remembers no read.
			off, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(a).Prefix(), AcceptEviction: true, ReadHints: -1})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				rec.txs = nil
				if tup, err := off.GetTuple(ctx, c2); err != nil || tup.Checkpoint.ChannelValues["a"] != "value 1" {
					t.Fatalf("ReadHints -1, read %d: %+v, %v", i, tup, err)
				}
				if len(rec.txs) != 0 {
					t.Errorf("ReadHints -1, read %d: predicted (transactions %v)", i, rec.txs)
				}
			}

			// A fork from c2, which r read: its pointers are known, so the
			// latest read after it is predicted too.
			fork := stagedStep(t, r, c2, 7)
			predicted("latest after a fork", checkpoint.Config{ThreadID: "t", CheckpointID: fork.CheckpointID}, true, "value 7")

			// c1 re-put by another saver (same id and parent, new metadata):
			// the prediction is wrong, the answer right.
			cp := checkpoint.Checkpoint{V: 4, ID: c1.CheckpointID, ChannelValues: map[string]any{"a": "value 0", "b": "kept"},
				ChannelVersions: map[string]string{"a": "1", "b": "1"}}
			if _, err := a.Put(ctx, checkpoint.Config{ThreadID: "t"}, cp, checkpoint.Metadata{"step": 0, "note": "again"}, map[string]string{"a": "1", "b": "1"}); err != nil {
				t.Fatal(err)
			}
			tup, err := r.GetTuple(ctx, c1)
			if err != nil || tup.Metadata["note"] != "again" || tup.Checkpoint.ChannelValues["a"] != "value 0" {
				t.Fatalf("c1 after its re-put: %+v, %v", tup, err)
			}
			requireSound(t, a, "t")
		})
	}
}

// TestPredictedReadRESP2: a predicted read answers the same tuple as an
// unpredicted one on a client speaking RESP2 (the HGETALL is an array
// there, a map in RESP3).
func TestPredictedReadRESP2(t *testing.T) {
	opts := *redistest.Real(t).Options()
	opts.Protocol = 2
	rdb := redis.NewClient(&opts)
	t.Cleanup(func() { rdb.Close() })
	rec := &txRecorder{}
	rdb.AddHook(rec)
	a := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	c2 := stagedStep(t, a, stagedStep(t, a, checkpoint.Config{ThreadID: "t"}, 0), 1)
	must(t, a.LoadScripts(ctx))
	rec.txs = nil
	got, err := a.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.txs) != 1 || !slices.Contains(rec.txs[0], "hgetall") {
		t.Fatalf("transactions %v, want the predicted read", rec.txs)
	}
	fresh, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(a).Prefix(), AcceptEviction: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.GetTuple(ctx, c2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("predicted %+v\nunpredicted %+v", got, want)
	}
}

// TestStagedBadArgs: a staged Put whose hash pairs break put.lua's order
// (docs/storage-format.md, "Writing a checkpoint") is refused with BADARGS,
// and its staged field is taken back: every key stays as it was.
func TestStagedBadArgs(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			c1 := stagedStep(t, s, checkpoint.Config{ThreadID: "t"}, 0)
			before := rawState(t, rdb, keys.Of(s).Prefix())
			l := keys.Of(s)
			shard := l.Shard("t")
			gen := rdb.HGet(ctx, l.Head("t"), "g").Val()
			values := l.Blobs("t", gen, "")
			keyList := []string{l.Head("t"), l.Threads(shard), l.All(shard), l.GC(shard), l.Events("t"), l.Feed(shard), values}
			const token = "abcdefghijklm"
			staged := "1:a2\x00" + token
			for name, pairs := range map[string][]any{
				"own pair not first":    {"v", "4", "c:a", "2\x00" + token},
				"own pair of another":   {"c:b", "2\x00" + token, "v", "4"},
				"inherited count wrong": {"c:a", "2\x00" + token, "v", "4", "c:b", "1"},
			} {
				args := []any{l.ShardBase(shard), keys.Encode("t"), keys.Encode(""), checkpoint.NewID(), c1.CheckpointID,
					"newgenxxxxxxx", token, 0, len(pairs) / 2, -1, 0, 0, 0}
				args = append(args, pairs...)
				args = append(args, staged, 0)
				cmd, _ := scriptrun.RunTx(ctx, rdb, scriptrun.Put, func(p redis.Pipeliner) { p.HSet(ctx, values, staged, "7:msgpack\xa1x") }, nil, keyList, args...)
				if err := cmd.Err(); err == nil || !strings.HasPrefix(err.Error(), "BADARGS") {
					t.Errorf("%s: %v, want BADARGS", name, err)
				}
				if after := rawState(t, rdb, keys.Of(s).Prefix()); !slices.Equal(after, before) {
					t.Errorf("%s: keys changed:\nbefore %q\nafter  %q", name, before, after)
				}
			}
		})
	}
}
