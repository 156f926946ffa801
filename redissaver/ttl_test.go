package redissaver_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

// TestTTL: a thread is a lease: its data keys carry no Redis TTL (a
// volatile-* eviction policy cannot evict them); once the lease runs out
// the thread reads as not found at once, and Sweep reclaims every key but
// the prefix's meta key, the shard's feed and the thread's event stream
// (which expires by itself).
func TestTTL(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	t0 := time.Now()
	mr.SetTime(t0)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true, TTL: time.Hour})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "ttl", CheckpointNS: "child:1"}
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": 1}, ChannelVersions: map[string]string{"a": "1"}}
	stored, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"run_id": "r1"}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "x", Value: 1}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	for _, k := range mr.Keys() {
		events := strings.HasSuffix(k, ":events")
		if ttl := mr.TTL(k); events != (ttl > 0) {
			t.Errorf("key %q: TTL %v", k, ttl)
		}
	}
	mr.SetTime(t0.Add(59 * time.Minute))
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatalf("GetTuple within the TTL: %v", err)
	}
	mr.SetTime(t0.Add(61 * time.Minute))
	if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("GetTuple after the TTL: %v", err)
	}
	for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
		t.Errorf("List after the TTL: %v %v", tup, err)
	}
	// Writes to a checkpoint of an expired thread are kept for a Put of it
	// (as for any checkpoint not stored), for 10 minutes: then Sweep takes
	// them too.
	if err := s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "x", Value: 2}}, "task2", ""); err != nil {
		t.Errorf("PutWrites after the TTL: %v", err)
	}
	mr.SetTime(t0.Add(72 * time.Minute))
	if _, err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, k := range dataKeys(mr) {
		if !strings.HasSuffix(k, "}:feed") && !strings.HasSuffix(k, ":events") {
			left = append(left, k)
		}
	}
	if len(left) != 0 {
		t.Errorf("keys left after expiry and Sweep: %v", left)
	}
}

// TestRefreshOnRead: with RefreshOnRead a read renews the whole thread's
// lease; without, it does not.
func TestRefreshOnRead(t *testing.T) {
	for _, refresh := range []bool{false, true} {
		mr, rdb := redistest.Mini(t)
		t0 := time.Now()
		mr.SetTime(t0)
		s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true, TTL: time.Hour, RefreshOnRead: refresh})
		ctx := context.Background()
		cfg := checkpoint.Config{ThreadID: "r"}
		if _, err := s.Put(ctx, cfg, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil); err != nil {
			t.Fatal(err)
		}
		mr.SetTime(t0.Add(40 * time.Minute))
		if _, err := s.GetTuple(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		mr.SetTime(t0.Add(80 * time.Minute))
		_, err := s.GetTuple(ctx, cfg)
		if refresh && err != nil {
			t.Errorf("RefreshOnRead: the read did not extend the TTL: %v", err)
		}
		if !refresh && !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("without RefreshOnRead the checkpoint outlived its TTL: %v", err)
		}
	}
}

// TestTTLThreadLivesWhole: reading an old checkpoint by id with
// RefreshOnRead keeps the whole thread alive, never only that checkpoint:
// the latest stays the latest, and when the lease runs out every checkpoint
// goes at once.
func TestTTLThreadLivesWhole(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	t0 := time.Now()
	mr.SetTime(t0)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true, TTL: time.Hour, RefreshOnRead: true})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "whole"}
	var ids []string
	for i := range 3 {
		mr.SetTime(t0.Add(time.Duration(i) * 20 * time.Minute))
		cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"kept": i}, ChannelVersions: map[string]string{"kept": string(rune('1' + i))}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cp.ID)
	}
	// Keep reading the first checkpoint by id, past the TTL of every write.
	for m := 60; m <= 200; m += 30 {
		mr.SetTime(t0.Add(time.Duration(m) * time.Minute))
		if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "whole", CheckpointID: ids[0]}); err != nil {
			t.Fatalf("minute %d: %v", m, err)
		}
	}
	latest, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "whole"})
	if err != nil || latest.Checkpoint.ID != ids[2] || latest.Checkpoint.ChannelValues["kept"] != int64(2) {
		t.Fatalf("latest after reads kept the thread alive: %+v, %v; want %s", latest, err, ids[2])
	}
	var listed []string
	for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "whole"}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tup.Checkpoint.ID)
	}
	slices.Reverse(listed)
	if !slices.Equal(listed, ids) {
		t.Errorf("List: %v, want %v", listed, ids)
	}
	mr.SetTime(t0.Add(200*time.Minute + 61*time.Minute))
	for _, id := range append(ids, "") {
		if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "whole", CheckpointID: id}); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("checkpoint %q after the lease ran out: %v", id, err)
		}
	}
}
