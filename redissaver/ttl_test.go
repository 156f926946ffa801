package redissaver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

func TestTTL(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{TTL: time.Hour})
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
	// Every key of the thread expires, its event stream included; only the
	// shard's shared registry and index (their entries are swept when List
	// passes them) and its event feed (trimmed by length) do not.
	for _, k := range mr.Keys() {
		shared := strings.HasSuffix(k, "}:threads") || strings.HasSuffix(k, "}:all") || strings.HasSuffix(k, "}:feed")
		if ttl := mr.TTL(k); shared != (ttl == 0) {
			t.Errorf("key %q: TTL %v", k, ttl)
		}
	}
	mr.FastForward(2 * time.Hour)
	if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("GetTuple after the TTL: %v", err)
	}
	for tup, err := range s.List(ctx, checkpoint.ListQuery{}) {
		t.Errorf("List after the TTL: %v %v", tup, err)
	}
	if ks := mr.Keys(); len(ks) != 1 || !strings.HasSuffix(ks[0], "}:feed") {
		t.Errorf("keys left after expiry and a List over every thread: %v (want the shard's feed only)", ks)
	}
}

func TestRefreshOnRead(t *testing.T) {
	for _, refresh := range []bool{false, true} {
		mr, rdb := redistest.Mini(t)
		s := newSaver(t, rdb, redissaver.Options{TTL: time.Hour, RefreshOnRead: refresh})
		ctx := context.Background()
		cfg := checkpoint.Config{ThreadID: "r"}
		if _, err := s.Put(ctx, cfg, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil); err != nil {
			t.Fatal(err)
		}
		mr.FastForward(40 * time.Minute)
		if _, err := s.GetTuple(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		mr.FastForward(40 * time.Minute)
		_, err := s.GetTuple(ctx, cfg)
		if refresh && err != nil {
			t.Errorf("RefreshOnRead: the read did not extend the TTL: %v", err)
		}
		if !refresh && !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("without RefreshOnRead the checkpoint outlived its TTL: %v", err)
		}
	}
}

// TestTTLOlderCheckpointsExpireFirst: each checkpoint lives TTL after its
// own write; the thread's keys live TTL after the last write, so the latest
// checkpoint always reads whole (values written by older checkpoints
// included).
func TestTTLOlderCheckpointsExpireFirst(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{TTL: time.Hour})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "old"}
	first := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"kept": "v"}, ChannelVersions: map[string]string{"kept": "1"}}
	c1, err := s.Put(ctx, cfg, first, nil, first.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	mr.FastForward(50 * time.Minute)
	second := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelVersions: map[string]string{"kept": "1"}}
	c2, err := s.Put(ctx, c1, second, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mr.FastForward(20 * time.Minute)
	if _, err := s.GetTuple(ctx, c1); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("the first checkpoint outlived its TTL: %v", err)
	}
	tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "old"})
	if err != nil || tup.Checkpoint.ID != c2.CheckpointID || tup.Checkpoint.ChannelValues["kept"] != "v" {
		t.Fatalf("latest after the first expired: %+v, %v", tup, err)
	}
	n := 0
	for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "old"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("List shows %d checkpoints, want 1", n)
	}
}
