package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
)

// chainStep puts checkpoint i of a chain on the thread of parent: channel
// "a" changes at every step, "b" keeps version 1.
func chainStep(t *testing.T, s *redissaver.Saver, parent checkpoint.Config, i int) checkpoint.Config {
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

// chain puts n checkpoints of chainStep's chain on thread th and returns
// the last.
func chain(t *testing.T, s *redissaver.Saver, th string, n int) checkpoint.Config {
	t.Helper()
	cfg := checkpoint.Config{ThreadID: th}
	for i := range n {
		cfg = chainStep(t, s, cfg, i)
	}
	return cfg
}

// TestPutOutOfOrder: a checkpoint put before the checkpoint that writes a
// version it names reads that version's value once it is written, as
// LangGraph's savers resolve a checkpoint's values by (channel, version)
// when it is read. Checkpoint 2 (parent 1) names a@3 and b@2 and writes
// a@3; it is put before checkpoint 1, which writes b@2.
func TestPutOutOfOrder(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			other, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(s).Prefix(), AcceptEviction: true})
			must(t, err)
			th := checkpoint.Config{ThreadID: "ooo"}
			root := checkpoint.Checkpoint{V: 4, ID: "1-root", ChannelValues: map[string]any{"a": "A1", "b": "B1"},
				ChannelVersions: map[string]string{"a": "1", "b": "1"}}
			c1 := checkpoint.Checkpoint{V: 4, ID: "2-one", ChannelValues: map[string]any{"b": "B2"},
				ChannelVersions: map[string]string{"a": "1", "b": "2"}}
			c2 := checkpoint.Checkpoint{V: 4, ID: "3-two", ChannelValues: map[string]any{"a": "A3"},
				ChannelVersions: map[string]string{"a": "3", "b": "2"}}
			rootCfg, err := s.Put(ctx, th, root, nil, map[string]string{"a": "1", "b": "1"})
			must(t, err)
			c1Cfg := rootCfg
			c1Cfg.CheckpointID = c1.ID
			_, err = s.Put(ctx, c1Cfg, c2, nil, map[string]string{"a": "3"}) // before its parent
			must(t, err)
			_, err = s.Put(ctx, rootCfg, c1, nil, map[string]string{"b": "2"})
			must(t, err)
			want := map[string]any{"a": "A3", "b": "B2"}
			for _, reader := range []*redissaver.Saver{s, other} {
				for name, cfg := range map[string]checkpoint.Config{"latest": th, "by id": {ThreadID: "ooo", CheckpointID: c2.ID}} {
					tup, err := reader.GetTuple(ctx, cfg)
					if err != nil || !reflect.DeepEqual(tup.Checkpoint.ChannelValues, want) {
						t.Errorf("%s: %v, %v; want %v", name, tupleValues(tup), err, want)
					}
				}
				for tup, err := range reader.List(ctx, checkpoint.ListQuery{ThreadID: "ooo", Limit: 1}) {
					if err != nil || !reflect.DeepEqual(tup.Checkpoint.ChannelValues, want) {
						t.Errorf("list: %v, %v; want %v", tupleValues(tup), err, want)
					}
				}
			}
			requireSound(t, s, "ooo")
		})
	}
}

func tupleValues(t *checkpoint.Tuple) any {
	if t == nil {
		return nil
	}
	return t.Checkpoint.ChannelValues
}

// TestPutInPlace: LangGraph's runtime puts a checkpoint it loaded again
// under its own id, with config.checkpoint_id that id (a resumed run with
// durability "exit" that interrupts again). The Put replaces the stored
// checkpoint's content and metadata and keeps its parent and its pending
// writes; an in-place Put of a checkpoint not stored is refused.
func TestPutInPlace(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := newSaver(t, b.client(t), redissaver.Options{})
			last := chain(t, s, "inplace", 3)
			must(t, s.PutWrites(ctx, last, []checkpoint.Write{{Channel: "w", Value: "pending"}}, "task", ""))
			before, err := s.GetTuple(ctx, last)
			must(t, err)
			cp := before.Checkpoint
			cp.VersionsSeen = map[string]map[string]string{"__interrupt__": {"a": "3"}}
			if _, err := s.Put(ctx, last, cp, checkpoint.Metadata{"step": 2, "source": "loop"}, nil); err != nil {
				t.Fatalf("in-place Put: %v", err)
			}
			after, err := s.GetTuple(ctx, last)
			must(t, err)
			if after.ParentConfig == nil || before.ParentConfig == nil || after.ParentConfig.CheckpointID != before.ParentConfig.CheckpointID {
				t.Errorf("parent %v, want %v", after.ParentConfig, before.ParentConfig)
			}
			if !reflect.DeepEqual(after.Checkpoint.VersionsSeen, cp.VersionsSeen) || after.Metadata["source"] != "loop" {
				t.Errorf("content not replaced: %v %v", after.Checkpoint.VersionsSeen, after.Metadata)
			}
			if len(after.PendingWrites) != 1 {
				t.Errorf("pending writes %v, want the one written before", after.PendingWrites)
			}
			if !reflect.DeepEqual(after.Checkpoint.ChannelValues, before.Checkpoint.ChannelValues) {
				t.Errorf("values %v, want %v", after.Checkpoint.ChannelValues, before.Checkpoint.ChannelValues)
			}
			n := 0
			for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "inplace"}) {
				must(t, err)
				n++
			}
			if n != 3 {
				t.Errorf("listed %d checkpoints, want 3", n)
			}
			missing := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}
			_, err = s.Put(ctx, checkpoint.Config{ThreadID: "inplace", CheckpointID: missing.ID}, missing, nil, nil)
			if !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
				t.Errorf("in-place Put of a checkpoint not stored: %v, want ErrInvalidCheckpoint", err)
			}
			requireSound(t, s, "inplace")
		})
	}
}

// TestPutAnyOrder is the differential test of write order: a thread's
// chain of checkpoints (11 channels, one changed per step, every
// checkpoint naming all of them) put in order, and the same chain put by 16
// writers concurrently in a random order, read back the same through
// GetTuple by id, the latest, and List.
func TestPutAnyOrder(t *testing.T) {
	const steps, writers = 300, 16
	type step struct {
		parent checkpoint.Config
		cp     checkpoint.Checkpoint
		nv     map[string]string
	}
	chans := make([]string, 11)
	for i := range chans {
		chans[i] = fmt.Sprint("ch", i)
	}
	build := func(th string) []step {
		out := make([]step, steps)
		versions := map[string]string{}
		values := map[string]any{}
		parent := checkpoint.Config{ThreadID: th}
		for i := range steps {
			nv := map[string]string{}
			for j, ch := range chans {
				if i == 0 || j == i%len(chans) {
					versions[ch] = fmt.Sprintf("%08d", i+1)
					values[ch] = fmt.Sprintf("%s at %d", ch, i)
					nv[ch] = versions[ch]
				}
			}
			cp := checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("%08d", i), ChannelValues: map[string]any{},
				ChannelVersions: map[string]string{}}
			for ch := range nv {
				cp.ChannelValues[ch] = values[ch]
			}
			for ch, v := range versions {
				cp.ChannelVersions[ch] = v
			}
			out[i] = step{parent, cp, nv}
			parent = checkpoint.Config{ThreadID: th, CheckpointID: cp.ID}
		}
		return out
	}
	snapshot := func(t *testing.T, s *redissaver.Saver, th string) []string {
		ctx := context.Background()
		var out []string
		for i := range steps {
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th, CheckpointID: fmt.Sprintf("%08d", i)})
			must(t, err)
			if len(tup.Checkpoint.ChannelValues) != len(chans) { // every checkpoint names every channel
				t.Errorf("%s: checkpoint %d reads %d channels, want %d", th, i, len(tup.Checkpoint.ChannelValues), len(chans))
			}
			out = append(out, fmt.Sprint(tup.Checkpoint.ChannelValues))
		}
		tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th})
		must(t, err)
		out = append(out, "latest "+fmt.Sprint(tup.Checkpoint.ChannelValues))
		for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th}) {
			must(t, err)
			out = append(out, "list "+fmt.Sprint(tup.Checkpoint.ChannelValues))
		}
		return out
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := newSaver(t, b.client(t), redissaver.Options{})
			for _, st := range build("ordered") {
				_, err := s.Put(ctx, st.parent, st.cp, nil, st.nv)
				must(t, err)
			}
			want := snapshot(t, s, "ordered")
			shuffled := build("shuffled")
			rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			work := make(chan step)
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for st := range work {
						if _, err := s.Put(ctx, st.parent, st.cp, nil, st.nv); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			for _, st := range shuffled {
				work <- st
			}
			close(work)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			got := snapshot(t, s, "shuffled")
			if !slices.Equal(got, want) {
				for i := range want {
					if i < len(got) && got[i] != want[i] {
						t.Errorf("read %d: got %s, want %s", i, got[i], want[i])
						break
					}
				}
				t.Errorf("%d reads differ from the in-order thread's", len(want))
			}
			requireSound(t, s, "shuffled")
		})
	}
}

// TestRePutEventSaysReplaced: the checkpoint event of a re-put (in place,
// or with the same parent) says that it replaced the stored checkpoint; a
// new checkpoint's does not.
func TestRePutEventSaysReplaced(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			last := chain(t, s, "re", 2)
			cp := checkpoint.Checkpoint{V: 4, ID: last.CheckpointID, ChannelVersions: map[string]string{"a": "2", "b": "1"}}
			_, err := s.Put(ctx, last, cp, checkpoint.Metadata{"step": 1}, nil)
			must(t, err)
			msgs := rdb.XRange(ctx, keys.Of(s).Events("re"), "-", "+").Val()
			var got []string
			for _, m := range msgs {
				ev, err := stream.DecodeEvent(m, nil)
				must(t, err)
				got = append(got, fmt.Sprint(ev.CheckpointID == last.CheckpointID, ev.Replaced))
			}
			if fmt.Sprint(got) != "[false false true false true true]" {
				t.Errorf("events (last id, replaced): %v, want the last one replaced only", got)
			}
		})
	}
}
