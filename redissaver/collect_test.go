package redissaver

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/keys"
	"github.com/redis/go-redis/v9"
)

// TestCollectValuesOverlapping: two reclaims of unreferenced values on one
// namespace at once (two Prunes or DeleteForRuns of one thread from two
// processes). The second to start empties the keep set the first had
// marked; the first must not then sweep with the marks it lost, which
// deleted values live checkpoints point to. A reclaim whose keep set went
// (another started, or it was lost) stops without deleting anything; the
// other reclaims.
func TestCollectValuesOverlapping(t *testing.T) {
	for name, client := range map[string]func(*testing.T) redis.UniversalClient{
		"miniredis": func(t *testing.T) redis.UniversalClient {
			_, c := redistest.Mini(t)
			return c
		},
		"redis": func(t *testing.T) redis.UniversalClient { return redistest.Real(t) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := New(ctx, client(t), Options{Prefix: redistest.Prefix(t), AcceptEviction: true})
			if err != nil {
				t.Fatal(err)
			}
			cfg := checkpoint.Config{ThreadID: "gc"}
			var ids []string
			for i := range 100 {
				v := fmt.Sprint(i + 1)
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": v},
					ChannelVersions: map[string]string{"a": v}}
				if cfg, err = s.Put(ctx, cfg, cp, nil, map[string]string{"a": v}); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, cfg.CheckpointID)
			}
			gen, err := s.rdb.HGet(ctx, s.layout.Head("gc"), keys.HeadGeneration).Result()
			if err != nil {
				t.Fatal(err)
			}
			enct := keys.Encode("gc")
			shard := s.layout.Shard("gc")
			// step runs one step of a job; it returns the job's next phase and cursor.
			step := func(job, phase, cursor string) (string, string) {
				t.Helper()
				cmds, err := s.runPipelined(ctx, scriptrun.BlobGC, []scriptCall{{
					keys: []string{s.layout.ShardBase(shard) + "t:" + enct},
					args: []any{s.layout.ShardBase(shard), enct, gen, "", phase, cursor, 10, job},
				}})
				if err != nil {
					t.Fatal(err)
				}
				res, err := cmds[0].Slice()
				if err != nil {
					t.Fatal(err)
				}
				return res[0].(string), res[1].(string)
			}
			// Job a marks half the index, job b starts, a goes on to the end of
			// its sweep, then b.
			a, b := keys.NewGen(), keys.NewGen()
			pa, ca := "mark", ""
			for range 5 {
				pa, ca = step(a, pa, ca)
			}
			pb, cb := step(b, "mark", "")
			for pa != "" {
				pa, ca = step(a, pa, ca)
			}
			for pb != "" {
				pb, cb = step(b, pb, cb)
			}
			for i, id := range ids {
				if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "gc", CheckpointID: id}); err != nil {
					t.Fatalf("checkpoint %d after two overlapping reclaims: %v", i, err)
				}
			}
			if n, err := s.rdb.Exists(ctx, s.layout.NamespaceBase("gc", gen, "")+":keep").Result(); err != nil || n != 0 {
				t.Errorf("keep set left: %d, %v", n, err)
			}
		})
	}
}
