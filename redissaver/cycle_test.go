package redissaver_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// cycleSaver is what the cycle tests call on both savers.
type cycleSaver interface {
	checkpoint.Saver
	checkpoint.RunDeleter
	checkpoint.Pruner
	checkpoint.DeltaHistorian
}

// makeCycle builds, through the public API, a parent chain that returns to
// itself: the root R (run "gone") is deleted, its child P stays, and R's ID
// is put again with P as its parent. Then T, a child of P. Every checkpoint
// has a version of channel "d" without a value (a delta channel), and a
// write of write bytes to it; R's first put holds a value for it. It
// returns T's config. ids are R, P and T.
func makeCycle(t *testing.T, s cycleSaver, ids []string, write int) checkpoint.Config {
	t.Helper()
	ctx := context.Background()
	r, p, tid := ids[0], ids[1], ids[2]
	base := checkpoint.Config{ThreadID: "cycle"}
	put := func(parent, id string, values map[string]any, run string) checkpoint.Config {
		t.Helper()
		v := checkpoint.NextVersion("")
		cp := checkpoint.Checkpoint{V: 4, ID: id, TS: "ts", ChannelValues: values, ChannelVersions: map[string]string{"d": v}}
		c, err := s.Put(ctx, base.WithID(parent), cp, checkpoint.Metadata{"step": 0, "run_id": run}, map[string]string{"d": v})
		if err != nil {
			t.Fatalf("Put %s: %v", id, err)
		}
		if err := s.PutWrites(ctx, c, []checkpoint.Write{{Channel: "d", Value: id + strings.Repeat("w", write)}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		return c
	}
	put("", r, map[string]any{"d": "seed"}, "gone")
	put(r, p, nil, "kept")
	if err := s.DeleteForRuns(ctx, []string{"gone"}); err != nil {
		t.Fatal(err)
	}
	put(p, r, nil, "kept") // R again, now P's parent: P -> R -> P
	return put(p, tid, nil, "kept")
}

// TestParentCycleWalkedOnce: a parent chain made into a cycle is walked
// once by DeltaChannelHistory and by PruneKeepLatest, as memsaver walks
// it, where both failed with ErrDataLoss before.
func TestParentCycleWalkedOnce(t *testing.T) {
	forTiers(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s, ref := newSaver(t, rdb, redissaver.Options{}), memsaver.New(memsaver.Options{})
		ids := []string{checkpoint.NewID(), checkpoint.NewID(), checkpoint.NewID()}
		target, rtarget := makeCycle(t, s, ids, 0), makeCycle(t, ref, ids, 0)
		got, err := s.DeltaChannelHistory(ctx, target, []string{"d"})
		if err != nil {
			t.Fatalf("DeltaChannelHistory over a cycle: %v", err)
		}
		want, err := ref.DeltaChannelHistory(ctx, rtarget, []string{"d"})
		if err != nil {
			t.Fatal(err)
		}
		if len(want["d"].Writes) != 2 || want["d"].HasSeed {
			t.Fatalf("memsaver's history %+v: want the writes of P and R, no seed", want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("history %+v, memsaver's %+v", got, want)
		}
		if err := s.Prune(ctx, []string{"cycle"}, checkpoint.PruneKeepLatest); err != nil {
			t.Fatalf("Prune over a cycle: %v", err)
		}
		if err := ref.Prune(ctx, []string{"cycle"}, checkpoint.PruneKeepLatest); err != nil {
			t.Fatal(err)
		}
		// Both keep T and its two ancestors (no value of "d" on the chain).
		for name, sv := range map[string]cycleSaver{"redissaver": s, "memsaver": ref} {
			n := 0
			for _, err := range sv.List(ctx, checkpoint.ListQuery{ThreadID: "cycle"}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 3 {
				t.Errorf("%s kept %d checkpoints, want 3", name, n)
			}
		}
		if v, err := violations(ctx, s, "cycle"); err != nil || len(v) > 0 {
			t.Fatalf("Check: %v %v", v, err)
		}
	})
}

// TestParentCycleAcrossSteps: a cycle that one script call does not close
// (each write here is large enough to end a call after 2 ancestors) cannot
// be told apart from a walk through ancestors of earlier calls: it is
// ErrDataLoss, not a history with writes twice.
func TestParentCycleAcrossSteps(t *testing.T) {
	forTiers(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := newSaver(t, rdb, redissaver.Options{})
		target := makeCycle(t, s, []string{checkpoint.NewID(), checkpoint.NewID(), checkpoint.NewID()}, 3<<20)
		_, err := s.DeltaChannelHistory(context.Background(), target, []string{"d"})
		if !errors.Is(err, checkpoint.ErrDataLoss) || !strings.Contains(err.Error(), "cycle") {
			t.Fatalf("DeltaChannelHistory over a cycle across calls: %v, want ErrDataLoss naming the cycle", err)
		}
	})
}

// forTiers runs f on miniredis and on a real Redis.
func forTiers(t *testing.T, f func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("miniredis", func(t *testing.T) { _, rdb := redistest.Mini(t); f(t, rdb) })
	t.Run("redis", func(t *testing.T) { f(t, redistest.Real(t)) })
}
