package memsaver_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
	"github.com/graphstate/redcheck/internal/testctx"
)

// These tests cover the semantics memsaver chose where the contract leaves a
// choice; the conformance kit covers the rest.

func newCP(values map[string]any, versions map[string]string) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{V: 1, ID: checkpoint.NewID(), ChannelValues: values, ChannelVersions: versions}
}

func TestPutValidatesIDs(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	for _, id := range []string{"", "a:b", "a b", "a%b", "a{b", "a}b", "a*b", "a?b", "a[b", "a]b", `a\b`, "é", "a\x7f", strings.Repeat("x", 129)} {
		ck := newCP(nil, nil)
		ck.ID = id
		if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, ck, nil, nil); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
			t.Errorf("Put id %q: err = %v, want ErrInvalidCheckpoint", id, err)
		}
	}
	for _, id := range []string{"a", "01J0ABCDEF", "6f1c-uuid-like-0000", strings.Repeat("x", 128), "!~.-_"} {
		ck := newCP(nil, nil)
		ck.ID = id
		if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, ck, nil, nil); err != nil {
			t.Errorf("Put id %q: %v", id, err)
		}
	}
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "t", CheckpointID: "bad:parent"}, newCP(nil, nil), nil, nil); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("Put with malformed parent id: err = %v, want ErrInvalidConfig", err)
	}
}

func TestNameLengths(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	long := strings.Repeat("n", memsaver.MaxNameLen+1)
	ok := strings.Repeat("n", memsaver.MaxNameLen)
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: ok, CheckpointNS: ok}, newCP(nil, nil), nil, nil); err != nil {
		t.Fatalf("Put with %d-byte names: %v", memsaver.MaxNameLen, err)
	}
	for _, c := range []checkpoint.Config{{ThreadID: long}, {ThreadID: "t", CheckpointNS: long}} {
		if _, err := s.Put(ctx, c, newCP(nil, nil), nil, nil); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("Put with an over-long name: err = %v, want ErrInvalidConfig", err)
		}
		if _, err := s.GetTuple(ctx, c); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("GetTuple with an over-long name: err = %v, want ErrInvalidConfig", err)
		}
	}
	for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: long}) {
		if !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("List with an over-long thread id: err = %v, want ErrInvalidConfig", err)
		}
	}
}

// TestPutWritesBeforeTheirCheckpoint: writes to a checkpoint not stored yet
// are kept for it: no read shows them, and its Put takes them.
func TestPutWritesBeforeTheirCheckpoint(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	cfg := checkpoint.Config{ThreadID: "t", CheckpointID: checkpoint.NewID()}
	if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "c", Value: 1}}, "task", ""); err != nil {
		t.Fatalf("PutWrites to a checkpoint not stored yet: %v", err)
	}
	if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("GetTuple before the Put: %v, want ErrNotFound", err)
	}
	cp := newCP(nil, nil)
	cp.ID = cfg.CheckpointID
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, cp, nil, nil); err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil || len(tup.PendingWrites) != 1 {
		t.Fatalf("after the Put: %v, %v; want the early write", tup, err)
	}
}

func TestInvalidMetadataAndValues(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	c := checkpoint.Config{ThreadID: "t"}
	if _, err := s.Put(ctx, c, newCP(nil, nil), checkpoint.Metadata{"f": func() {}}, nil); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
		t.Errorf("Put with a func in metadata: err = %v, want ErrInvalidCheckpoint", err)
	}
	ck := newCP(map[string]any{"c": make(chan int)}, map[string]string{"c": "1"})
	if _, err := s.Put(ctx, c, ck, nil, map[string]string{"c": "1"}); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
		t.Errorf("Put with a channel value: err = %v, want ErrInvalidCheckpoint", err)
	}
	if _, err := s.GetTuple(ctx, c); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("a failed Put stored something: err = %v", err)
	}
}

func TestStoredValuesAreCopies(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	list := []any{"a"}
	m := checkpoint.Metadata{"nested": map[string]any{"k": "v"}}
	ck := newCP(map[string]any{"l": list}, map[string]string{"l": "1"})
	stored, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, ck, m, map[string]string{"l": "1"})
	if err != nil {
		t.Fatal(err)
	}
	list[0] = "changed"
	m["nested"].(map[string]any)["k"] = "changed"
	ck.ChannelVersions["l"] = "9"
	tp, err := s.GetTuple(ctx, stored)
	if err != nil {
		t.Fatal(err)
	}
	if got := tp.Checkpoint.ChannelValues["l"].([]any)[0]; got != "a" {
		t.Errorf("channel value changed with the caller's slice: %v", got)
	}
	if got := tp.Metadata["nested"].(map[string]any)["k"]; got != "v" {
		t.Errorf("metadata changed with the caller's map: %v", got)
	}
	if got := tp.Checkpoint.ChannelVersions["l"]; got != "1" {
		t.Errorf("channel version changed with the caller's map: %v", got)
	}
	tp.Checkpoint.ChannelValues["l"].([]any)[0] = "mutated"
	again, _ := s.GetTuple(ctx, stored)
	if got := again.Checkpoint.ChannelValues["l"].([]any)[0]; got != "a" {
		t.Errorf("a read tuple shares storage: %v", got)
	}
}

func TestCopyThreadErrors(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	for _, tid := range []string{"src", "dst"} {
		if _, err := s.Put(ctx, checkpoint.Config{ThreadID: tid}, newCP(nil, nil), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, pair := range [][2]string{{"src", "dst"}, {"src", "src"}, {"", "x"}, {"src", ""}} {
		if err := s.CopyThread(ctx, pair[0], pair[1]); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("CopyThread(%q, %q): err = %v, want ErrInvalidConfig", pair[0], pair[1], err)
		}
	}
	if err := s.CopyThread(ctx, "missing", "dst"); err != nil {
		t.Errorf("CopyThread of a missing source: %v, want a no-op", err)
	}
}

func TestPruneKeepsReferencedValues(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	// The first checkpoint writes b at version 1; the second carries b over.
	c1, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"},
		newCP(map[string]any{"a": "a1", "b": "b1"}, map[string]string{"a": "1", "b": "1"}), nil, map[string]string{"a": "1", "b": "1"})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s.Put(ctx, c1, newCP(map[string]any{"a": "a2", "b": "b1"}, map[string]string{"a": "2", "b": "1"}), nil, map[string]string{"a": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{"t"}, checkpoint.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	tp, err := s.GetTuple(ctx, c2)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Checkpoint.ChannelValues["a"] != "a2" || tp.Checkpoint.ChannelValues["b"] != "b1" {
		t.Fatalf("channel values after prune = %v, want a2 and b1", tp.Checkpoint.ChannelValues)
	}
	if err := s.Prune(ctx, []string{"t"}, "keep_some"); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("Prune with an unknown strategy: err = %v, want ErrInvalidConfig", err)
	}
}

// TestPruneKeepsDeltaSeeds: PruneKeepLatest keeps the ancestors a delta
// channel of the latest checkpoint (a version without a value) needs to
// reach its seed, as redissaver does, and no others.
func TestPruneKeepsDeltaSeeds(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	// c1 holds the seed of "d", c2 and c3 only versions of it; "a" has a
	// value everywhere. c0 is older than the seed and goes.
	c, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, newCP(map[string]any{"a": 0}, map[string]string{"a": "0"}), nil, map[string]string{"a": "0"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, d := range []any{"seed", nil, nil} {
		v := fmt.Sprint(i + 1)
		values := map[string]any{"a": i}
		if d != nil {
			values["d"] = d
		}
		if c, err = s.Put(ctx, c, newCP(values, map[string]string{"a": v, "d": v}), nil, map[string]string{"a": v, "d": v}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.CheckpointID)
	}
	if err := s.Prune(ctx, []string{"t"}, checkpoint.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for tp, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, tp.Checkpoint.ID)
	}
	if want := []string{ids[2], ids[1], ids[0]}; fmt.Sprint(kept) != fmt.Sprint(want) {
		t.Fatalf("kept %v, want the latest and its ancestors up to the seed %v", kept, want)
	}
	h, err := s.DeltaChannelHistory(ctx, c, []string{"d"})
	if err != nil || !h["d"].HasSeed || h["d"].Seed != "seed" {
		t.Fatalf("history after prune: %+v, %v; want the seed", h, err)
	}
}

func TestDeltaChannelHistoryErrors(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	missing := checkpoint.Config{ThreadID: "t", CheckpointID: checkpoint.NewID()}
	if _, err := s.DeltaChannelHistory(ctx, missing, []string{"ch"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("history of a missing checkpoint: err = %v, want ErrNotFound", err)
	}
	if r, err := s.DeltaChannelHistory(ctx, missing, nil); err != nil || r == nil || len(r) != 0 {
		t.Errorf("history of no channels = (%v, %v), want an empty map", r, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := memsaver.New(memsaver.Options{})
	ctx := testctx.Context(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine owns its thread (PutWrites to a checkpoint
			// another goroutine pruned would rightly fail); List and
			// CopyThread read the shared state.
			c := checkpoint.Config{ThreadID: fmt.Sprint("thread-", g)}
			for i := range 50 {
				stored, err := s.Put(ctx, c, newCP(map[string]any{"i": i}, map[string]string{"i": fmt.Sprint(i)}), checkpoint.Metadata{"step": i}, map[string]string{"i": fmt.Sprint(i)})
				if err != nil {
					t.Error(err)
					return
				}
				if err := s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "w", Value: i}}, "task", ""); err != nil {
					t.Error(err)
					return
				}
				for _, err := range s.List(ctx, checkpoint.ListQuery{Limit: 3}) {
					if err != nil {
						t.Error(err)
						return
					}
				}
				c = stored
			}
			if err := s.CopyThread(ctx, fmt.Sprint("thread-", (g+1)%8), fmt.Sprint("copy-", g)); err != nil {
				t.Error(err)
			}
			if err := s.Prune(ctx, []string{c.ThreadID}, checkpoint.PruneKeepLatest); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
