package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// TestPutWritesBeforeTheirCheckpoint: LangGraph's runtime (durability
// "async") sends a step's pending writes while the Put of their checkpoint
// is under way. PutWrites to a checkpoint not stored yet, in a thread that
// exists and in one that does not, is accepted in one round trip; no read
// shows the writes before the checkpoint exists, nor on another
// checkpoint; the Put that stores the checkpoint takes them, so reads of
// it show them, and later writes add to them. Writes whose checkpoint
// never comes are reclaimed by Sweep once their time has come, and leave no
// key.
func TestPutWritesBeforeTheirCheckpoint(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ctx := context.Background()
			for _, th := range []string{"new-thread", "live-thread"} {
				parent := checkpoint.Config{ThreadID: th}
				if th == "live-thread" {
					parent = chain(t, s, th, 2)
				}
				id := checkpoint.NewID()
				cfg := checkpoint.Config{ThreadID: th, CheckpointID: id}
				must(t, s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "a", Value: "early"}}, "task-1", ""))
				must(t, s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: checkpoint.InterruptChannel, Value: "ask"}}, "task-2", ""))
				if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, checkpoint.ErrNotFound) {
					t.Errorf("%s: GetTuple of the checkpoint not stored: %v, want ErrNotFound", th, err)
				}
				if th == "live-thread" {
					latest, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th})
					must(t, err)
					if latest.Config.CheckpointID != parent.CheckpointID || len(latest.PendingWrites) != 0 {
						t.Errorf("%s: the latest shows %d writes (checkpoint %s)", th, len(latest.PendingWrites), latest.Config.CheckpointID)
					}
				}
				cp := checkpoint.Checkpoint{V: 4, ID: id}
				_, err := s.Put(ctx, parent, cp, checkpoint.Metadata{"step": 9}, nil)
				must(t, err)
				must(t, s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "b", Value: "after"}}, "task-3", ""))
				tup, err := s.GetTuple(ctx, cfg)
				must(t, err)
				got := map[string]any{}
				for _, w := range tup.PendingWrites {
					got[w.TaskID+"/"+w.Channel] = w.Value
				}
				want := map[string]any{"task-1/a": "early", "task-2/" + checkpoint.InterruptChannel: "ask", "task-3/b": "after"}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: pending writes %v, want %v", th, got, want)
				}
				requireSound(t, s, th)
			}

			// Writes whose checkpoint never comes: reclaimed once their time
			// has come (10 minutes; moved forward here).
			never := checkpoint.Config{ThreadID: "never", CheckpointID: checkpoint.NewID()}
			must(t, s.PutWrites(ctx, never, []checkpoint.Write{{Channel: "a", Value: 1}}, "t", ""))
			l := keys.Of(s)
			reg := l.EarlyIndex(l.Shard("never"))
			members := rdb.ZRange(ctx, reg, 0, -1).Val()
			if len(members) != 1 {
				t.Fatalf("early registry %s holds %v, want the one early write", reg, members)
			}
			must(t, rdb.ZAdd(ctx, reg, redis.Z{Score: float64(time.Now().Add(-time.Minute).UnixMilli()), Member: members[0]}).Err())
			_, err := s.Sweep(ctx)
			must(t, err)
			for _, k := range rdb.Keys(ctx, l.Prefix()+":*never*").Val() {
				if ttl := rdb.PTTL(ctx, k).Val(); k != l.Events("never") || ttl <= 0 || ttl > 10*time.Minute {
					t.Errorf("Sweep left %s (TTL %v)", k, ttl)
				}
			}
			if n := rdb.ZCard(ctx, reg).Val(); n != 0 {
				t.Errorf("early registry holds %d members after Sweep", n)
			}
		})
	}
}
