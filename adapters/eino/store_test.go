package eino_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/adapters/eino"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/oklog/ulid/v2"
)

// newStore returns a store on a new saver of the tier.
func newStore(t testing.TB, tr tier, sopts redissaver.Options, opts eino.Options) *eino.Store {
	t.Helper()
	st, err := eino.New(tr.saver(t, sopts), opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// history returns the versions of id, newest first.
func history(t testing.TB, st *eino.Store, id string) []*eino.Version {
	t.Helper()
	var out []*eino.Version
	for v, err := range st.History(context.Background(), id, 0) {
		if err != nil {
			t.Fatalf("History(%q): %v", id, err)
		}
		out = append(out, v)
	}
	return out
}

// TestGetSet: eino's contract on the Store. An unknown ID is (nil, false,
// nil); a Set is read back by Get, by another Store on another client too;
// each Set is a new checkpoint, a child of the one before, its step one
// more; empty and binary values round-trip; an empty ID is refused, not
// read as "not found".
func TestGetSet(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		p := prefix(t)
		st := newStore(t, tr, redissaver.Options{Prefix: p}, eino.Options{})
		if data, ok, err := st.Get(ctx, "run-1"); data != nil || ok || err != nil {
			t.Fatalf("Get of an unknown id: %q %v %v", data, ok, err)
		}
		values := [][]byte{[]byte("first"), {}, nil, {0, 1, 2, 0xff, '\n', 0}, bytes.Repeat([]byte("x"), 100_000)}
		for i, v := range values {
			if err := st.Set(ctx, "run-1", v); err != nil {
				t.Fatalf("Set %d: %v", i, err)
			}
			// Another process: a new client, saver and store.
			other := newStore(t, tr, redissaver.Options{Prefix: p}, eino.Options{})
			data, ok, err := other.Get(ctx, "run-1")
			if err != nil || !ok || !bytes.Equal(data, v) {
				t.Fatalf("Get after Set %d: %d bytes %v %v, want %d bytes", i, len(data), ok, err, len(v))
			}
		}
		hist := history(t, st, "run-1")
		if len(hist) != len(values) {
			t.Fatalf("History: %d versions, want %d", len(hist), len(values))
		}
		for i, v := range hist {
			want := len(values) - 1 - i
			if v.Step != int64(want) || v.Source != "eino" || !bytes.Equal(v.Data, values[want]) {
				t.Errorf("version %d: step %d source %q %d bytes, want step %d, %d bytes", i, v.Step, v.Source, len(v.Data), want, len(values[want]))
			}
			if i+1 < len(hist) && v.ParentID != hist[i+1].CheckpointID {
				t.Errorf("version %d: parent %q, want %q", i, v.ParentID, hist[i+1].CheckpointID)
			}
		}
		if hist[len(hist)-1].ParentID != "" {
			t.Errorf("first version has parent %q", hist[len(hist)-1].ParentID)
		}
		// GetVersion reads any of them; a version that does not exist is
		// not found.
		v, err := st.GetVersion(ctx, "run-1", hist[len(hist)-1].CheckpointID)
		if err != nil || string(v.Data) != "first" {
			t.Errorf("GetVersion of the first: %v %v", v, err)
		}
		if _, err := st.GetVersion(ctx, "run-1", checkpoint.NewID()); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("GetVersion of an unknown version: %v", err)
		}
		// Names: an empty id is refused, an over-long one too; any bytes
		// are an id.
		if _, _, err := st.Get(ctx, ""); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("Get(\"\"): %v", err)
		}
		if err := st.Set(ctx, "", []byte("x")); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("Set(\"\"): %v", err)
		}
		long := strings.Repeat("x", 4097)
		if err := st.Set(ctx, long, []byte("x")); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("Set of a 4097-byte id: %v", err)
		}
		if _, _, err := st.Get(ctx, long); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("Get of a 4097-byte id: %v", err)
		}
		for _, id := range []string{"a:b{c}*?[x]", "ünïcode 🙂", "\x00\xff", strings.Repeat("y", 4096)} {
			if err := st.Set(ctx, id, []byte(id)); err != nil {
				t.Errorf("Set(%q): %v", id, err)
				continue
			}
			if data, ok, err := st.Get(ctx, id); err != nil || !ok || string(data) != id {
				t.Errorf("Get(%q): %q %v %v", id, data, ok, err)
			}
		}
	})
}

// TestNew: options New refuses.
func TestNew(t *testing.T) {
	if _, err := eino.New(nil, eino.Options{}); !errors.Is(err, eino.ErrInvalidOptions) || !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("nil saver: %v", err)
	}
	tiers(t, func(t *testing.T, tr tier) {
		if _, err := eino.New(tr.saver(t, redissaver.Options{Prefix: prefix(t)}), eino.Options{PruneEvery: -1}); !errors.Is(err, eino.ErrInvalidOptions) {
			t.Errorf("negative PruneEvery: %v", err)
		}
	})
}

// TestSetAfterAFutureCheckpoint: a Set always becomes the latest, even
// when the latest checkpoint was written by a process whose clock is an
// hour ahead (its ULID sorts after any this process makes now), and when
// the thread's IDs are of another scheme.
func TestSetAfterAFutureCheckpoint(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		st := newStore(t, tr, redissaver.Options{Prefix: prefix(t)}, eino.Options{})
		for _, c := range []struct{ name, id string }{
			{"ulid an hour ahead", ulid.MustNew(ulid.Timestamp(time.Now().Add(time.Hour)), ulid.DefaultEntropy()).String()},
			{"another scheme", "zzzz-not-a-ulid"},
		} {
			thread := "future-" + c.name
			cp, nv := checkpoint.Next(checkpoint.Empty(), map[string]any{eino.Channel: []byte("from the future")}, nil)
			cp.ID = c.id
			if _, err := st.Saver().Put(ctx, checkpoint.Root(thread, ""), cp, checkpoint.Metadata{"source": "eino", "step": 0}, nv); err != nil {
				t.Fatal(err)
			}
			if err := st.Set(ctx, thread, []byte("now")); err != nil {
				t.Fatal(err)
			}
			if data, _, err := st.Get(ctx, thread); err != nil || string(data) != "now" {
				t.Errorf("%s: Get after Set: %q %v", c.name, data, err)
			}
			if h := history(t, st, thread); len(h) != 2 || h[0].ParentID != c.id || h[0].Step != 1 {
				t.Errorf("%s: history %+v", c.name, h)
			}
		}
	})
}

// TestConcurrentSets: Sets of one ID from many goroutines, each with its
// own saver (processes), are all stored whole; Get answers the one with the
// greatest checkpoint ID. Sets of distinct IDs meanwhile stay apart.
func TestConcurrentSets(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		p := prefix(t)
		const writers, each = 8, 5
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			st := newStore(t, tr, redissaver.Options{Prefix: p}, eino.Options{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if err := st.Set(ctx, "shared", []byte(fmt.Sprint("w", w, "-", i))); err != nil {
						errs <- err
						return
					}
					own := fmt.Sprint("own-", w)
					if err := st.Set(ctx, own, []byte(fmt.Sprint(own, "-", i))); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		st := newStore(t, tr, redissaver.Options{Prefix: p}, eino.Options{})
		hist := history(t, st, "shared")
		if len(hist) != writers*each {
			t.Fatalf("shared: %d versions, want %d", len(hist), writers*each)
		}
		data, _, err := st.Get(ctx, "shared")
		if err != nil || !bytes.Equal(data, hist[0].Data) {
			t.Errorf("Get(shared) = %q %v, want the newest version %q", data, err, hist[0].Data)
		}
		for w := range writers {
			own := fmt.Sprint("own-", w)
			if data, _, err := st.Get(ctx, own); err != nil || string(data) != fmt.Sprint(own, "-", each-1) {
				t.Errorf("Get(%s) = %q %v", own, data, err)
			}
			if h := history(t, st, own); len(h) != each {
				t.Errorf("%s: %d versions, want %d", own, len(h), each)
			}
		}
	})
}

// TestPruneEvery: with PruneEvery 1 an ID keeps one checkpoint whatever
// the number of Sets, and the same data keys; with 3, at most 4; with 0
// all of them. Prune on demand leaves the latest.
func TestPruneEvery(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		for _, c := range []struct{ every, max int }{{1, 1}, {3, 4}, {0, 12}} {
			p := prefix(t)
			var pruneErrs []error
			st := newStore(t, tr, redissaver.Options{Prefix: p}, eino.Options{PruneEvery: c.every,
				OnPruneError: func(_ context.Context, _ string, err error) { pruneErrs = append(pruneErrs, err) }})
			keys := 0
			for i := range 12 {
				if err := st.Set(ctx, "loop", []byte(fmt.Sprint("interrupt ", i))); err != nil {
					t.Fatal(err)
				}
				n := len(history(t, st, "loop"))
				if n > c.max {
					t.Errorf("PruneEvery %d: %d versions after %d Sets, want at most %d", c.every, n, i+1, c.max)
				}
				if k := len(tr.dataKeys(t, p)); c.every == 1 && i > 0 && k != keys {
					t.Errorf("PruneEvery 1: %d data keys after %d Sets, %d after the first", k, i+1, keys)
				} else if i == 0 {
					keys = k
				}
			}
			if data, _, err := st.Get(ctx, "loop"); err != nil || string(data) != "interrupt 11" {
				t.Errorf("PruneEvery %d: Get = %q %v", c.every, data, err)
			}
			if h := history(t, st, "loop"); h[0].Step != 11 {
				t.Errorf("PruneEvery %d: latest step %d, want 11", c.every, h[0].Step)
			}
			if len(pruneErrs) != 0 {
				t.Errorf("PruneEvery %d: prune errors %v", c.every, pruneErrs)
			}
			if err := st.Prune(ctx, "loop"); err != nil {
				t.Fatal(err)
			}
			if h := history(t, st, "loop"); len(h) != 1 || string(h[0].Data) != "interrupt 11" {
				t.Errorf("PruneEvery %d: after Prune %d versions", c.every, len(h))
			}
		}
	})
}

// TestFork: a fork makes an older checkpoint of one ID the latest of
// another, with its source in the metadata; the source is unchanged.
func TestFork(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		st := newStore(t, tr, redissaver.Options{Prefix: prefix(t)}, eino.Options{})
		for _, v := range []string{"ask", "ask again", "done"} {
			if err := st.Set(ctx, "src", []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		hist := history(t, st, "src")
		if err := st.Fork(ctx, "src", hist[2].CheckpointID, "dst"); err != nil {
			t.Fatal(err)
		}
		if data, _, err := st.Get(ctx, "dst"); err != nil || string(data) != "ask" {
			t.Errorf("Get(dst) = %q %v", data, err)
		}
		d := history(t, st, "dst")
		from, _ := d[0].Metadata["forked_from"].(map[string]any)
		if len(d) != 1 || d[0].Source != "fork" || from["id"] != "src" || from["checkpoint"] != hist[2].CheckpointID {
			t.Errorf("dst history %+v", d[0])
		}
		if data, _, err := st.Get(ctx, "src"); err != nil || string(data) != "done" || len(history(t, st, "src")) != 3 {
			t.Errorf("src after the fork: %q %v", data, err)
		}
		// The latest ("" ) to a target with a history of its own: it follows it.
		if err := st.Fork(ctx, "src", "", "dst"); err != nil {
			t.Fatal(err)
		}
		if d := history(t, st, "dst"); len(d) != 2 || string(d[0].Data) != "done" || d[0].ParentID != d[1].CheckpointID || d[0].Step != 1 {
			t.Errorf("dst after the second fork: %+v", d)
		}
		if err := st.Fork(ctx, "nothing", "", "dst2"); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("fork of an unknown id: %v", err)
		}
	})
}

// TestCompression: with the saver's compression eino's bytes are stored
// compressed (the values hash holds far fewer bytes than they are) and read
// back whole.
func TestCompression(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		p := prefix(t)
		st := newStore(t, tr, redissaver.Options{Prefix: p, Compression: redissaver.Compression{Enabled: true}}, eino.Options{})
		data := bytes.Repeat([]byte(`{"role":"user","content":"please refund order 1001"}`), 2000)
		if err := st.Set(ctx, "big", data); err != nil {
			t.Fatal(err)
		}
		got, _, err := st.Get(ctx, "big")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get: %d bytes %v, want %d", len(got), err, len(data))
		}
		rdb := tr.client(t)
		stored := 0
		for _, k := range tr.keysUnder(t, p) {
			if strings.HasSuffix(k, ":blobs") {
				for f, v := range rdb.HGetAll(ctx, k).Val() {
					if f != "#" {
						stored += len(v)
					}
				}
			}
		}
		if stored == 0 || stored > len(data)/10 {
			t.Errorf("stored %d bytes for %d bytes of eino data", stored, len(data))
		}
	})
}

// TestEvents: each Set publishes a checkpoint event of the ID's thread
// (what redcheck tail prints), a prune a pruned event, Delete a
// thread_deleted event.
func TestEvents(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		p := prefix(t)
		st := newStore(t, tr, redissaver.Options{Prefix: p}, eino.Options{PruneEvery: 2})
		for i := range 3 {
			if err := st.Set(ctx, "watched", []byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Delete(ctx, "watched"); err != nil {
			t.Fatal(err)
		}
		sub, err := stream.New(tr.client(t), stream.Options{Prefix: p})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: "watched", From: stream.FromBeginning}) {
			if err != nil {
				t.Fatal(err)
			}
			line := string(ev.Type)
			if ev.Type == stream.TypeCheckpoint {
				line += fmt.Sprintf(" step=%d source=%s channels=%v", ev.Step, ev.Source, ev.Channels)
			}
			got = append(got, line)
			if ev.Type == stream.TypeThreadDeleted {
				break
			}
		}
		want := []string{"checkpoint step=0 source=eino channels=[eino]", "checkpoint step=1 source=eino channels=[eino]",
			"checkpoint step=2 source=eino channels=[eino]", "pruned", "thread_deleted"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("events:\n got %q\nwant %q", got, want)
		}
	})
}

// TestNotEino: a thread holding checkpoints of something else answers
// ErrNotEino, not "not found" and not a fresh start.
func TestNotEino(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		st := newStore(t, tr, redissaver.Options{Prefix: prefix(t)}, eino.Options{})
		cp, nv := checkpoint.Next(checkpoint.Empty(), map[string]any{"messages": []any{"hi"}}, nil)
		if _, err := st.Saver().Put(ctx, checkpoint.Root("langgraph", ""), cp, checkpoint.Metadata{"step": -1}, nv); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := st.Get(ctx, "langgraph"); ok || !errors.Is(err, eino.ErrNotEino) || !errors.Is(err, checkpoint.ErrSerialization) {
			t.Errorf("Get of a LangGraph thread: %v %v", ok, err)
		}
	})
}
