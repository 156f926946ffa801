package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/redissaver"
)

// The stream maxlen a script receives is read by lib.lua's event_bounds,
// before the script's first write: a number <= 0 turns its events off, one
// that is not a number is refused with nothing changed.

// TestPutWritesEventMaxlen: a stream maxlen that is a number <= 0 turns
// publishing off (lib.lua's event_bounds reads it so once, and its callers
// test the string); one that is not a number is refused before anything is
// written.
func TestPutWritesEventMaxlen(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx, rdb, s, cfg := rootCheckpoint(t, b.client(t), "maxlen")
			l := keys.Of(s)
			shard := l.Shard("maxlen")
			keyList := []string{l.Head("maxlen"), l.Threads(shard), l.Events("maxlen"), l.Feed(shard)}
			call := func(maxlen, token string, idx int) error {
				args := []any{l.ShardBase(shard), keys.Encode("maxlen"), keys.Encode(""), cfg.CheckpointID, 0, -1, 0, 0, token,
					maxlen, 10, "task", 0, fmt.Sprintf("w:4:task:%d", idx), "1:a0:4:json1", "n", "a"}
				return scriptrun.Run(ctx, rdb, scriptrun.PutWrites, keyList, args...).Err()
			}
			events := rdb.XLen(ctx, l.Events("maxlen")).Val()
			before := rawState(t, rdb, l.Prefix())
			if err := call("x", "tok-x", 0); err == nil {
				t.Error("maxlen x: stored, want an error")
			}
			if after := rawState(t, rdb, l.Prefix()); !slices.Equal(after, before) {
				t.Errorf("maxlen x: keys changed:\nbefore %q\nafter  %q", before, after)
			}
			for i, maxlen := range []string{"0", "-3", "00"} {
				if err := call(maxlen, "tok-"+maxlen, i); err != nil {
					t.Fatalf("maxlen %s: %v", maxlen, err)
				}
				if n := rdb.XLen(ctx, l.Events("maxlen")).Val(); n != events {
					t.Errorf("maxlen %s: %d events, want %d (publishing off)", maxlen, n, events)
				}
			}
			if err := call("5", "tok-5", 3); err != nil {
				t.Fatal(err)
			}
			if n := rdb.XLen(ctx, l.Events("maxlen")).Val(); n != events+1 {
				t.Errorf("maxlen 5: %d events, want %d", n, events+1)
			}
			tup, err := s.GetTuple(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(tup.PendingWrites) != 4 {
				t.Errorf("%d pending writes, want 4", len(tup.PendingWrites))
			}
		})
	}
}

// TestDeleteRunsEventMaxlen: delete_runs.lua reads its stream maxlen with
// lib.lua's event_bounds too, before its first write: one that is not a
// number is refused with nothing deleted; "-1" deletes and publishes nothing.
func TestDeleteRunsEventMaxlen(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{Shards: 1})
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "runs"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()},
				checkpoint.Metadata{"run_id": "r1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			l := keys.Of(s)
			call := func(maxlen string) error {
				return scriptrun.Run(ctx, rdb, scriptrun.DeleteRuns, []string{l.Run(0, "r1")},
					l.ShardBase(0), 128, maxlen, 10, codec.JoinNames([]string{"r1"}), "0", 3_600_000).Err()
			}
			events := rdb.XLen(ctx, l.Events("runs")).Val()
			before := rawState(t, rdb, l.Prefix())
			if err := call("x"); err == nil {
				t.Error("maxlen x: ran, want an error")
			}
			if after := rawState(t, rdb, l.Prefix()); !slices.Equal(after, before) {
				t.Errorf("maxlen x: keys changed:\nbefore %q\nafter  %q", before, after)
			}
			if err := call("-1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("after delete_runs: %v, want ErrNotFound", err)
			}
			if n := rdb.XLen(ctx, l.Events("runs")).Val(); n != events {
				t.Errorf("maxlen -1: %d events, want %d (publishing off)", n, events)
			}
		})
	}
}
