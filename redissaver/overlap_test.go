package redissaver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// overlapBackends are the tiers the overlap tests run on.
var overlapBackends = map[string]func(*testing.T) redis.UniversalClient{
	"miniredis": func(t *testing.T) redis.UniversalClient {
		_, c := redistest.Mini(t)
		return c
	},
	"redis": func(t *testing.T) redis.UniversalClient { return redistest.Real(t) },
}

// overlapSaver is a saver on its own prefix of rdb.
func overlapSaver(t *testing.T, rdb redis.UniversalClient) *Saver {
	t.Helper()
	s, err := New(context.Background(), rdb, Options{Prefix: redistest.Prefix(t), AcceptEviction: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// putVersions puts a chain of n checkpoints on thread, the i-th writing
// version i+1 of channel "a" (value "i+1"); it returns the last config and
// the IDs in order.
func putVersions(t *testing.T, s *Saver, thread string, n int) (checkpoint.Config, []string) {
	t.Helper()
	cfg := checkpoint.Config{ThreadID: thread}
	var ids []string
	for i := range n {
		v := fmt.Sprint(i + 1)
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": v},
			ChannelVersions: map[string]string{"a": v}}
		var err error
		if cfg, err = s.Put(context.Background(), cfg, cp, nil, map[string]string{"a": v}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cfg.CheckpointID)
	}
	return cfg, ids
}

// putDeltaChain puts a chain of n checkpoints on thread: "log" a delta
// channel with a new version at each, its value (the seed) at checkpoint
// seedAt only, and one write to it each (the checkpoint's index); runOf, when
// not nil, names the run of each ("" for none). It returns the last config
// and the IDs in order.
func putDeltaChain(t *testing.T, s *Saver, thread string, n, seedAt int, runOf func(int) string) (checkpoint.Config, []string) {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: thread}
	var ids []string
	for i := range n {
		v := fmt.Sprint(i + 1)
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{},
			ChannelVersions: map[string]string{"log": v}}
		if i == seedAt {
			cp.ChannelValues["log"] = checkpoint.DeltaSnapshot{Value: []any{"seed"}}
		}
		md := checkpoint.Metadata{}
		if runOf != nil && runOf(i) != "" {
			md["run_id"] = runOf(i)
		}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, md, map[string]string{"log": v}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "log", Value: i}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cfg.CheckpointID)
	}
	return cfg, ids
}

// TestCollectValuesOverlapping: two reclaims of unreferenced values on one
// namespace at once (two Prunes or DeleteForRuns of one thread from two
// processes). The second to start empties the keep set the first had
// marked; the first must not then sweep with the marks it lost, which
// deleted values live checkpoints point to. A reclaim whose keep set went
// (another started, or it was lost) stops without deleting anything; the
// other reclaims.
func TestCollectValuesOverlapping(t *testing.T) {
	for name, client := range overlapBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := overlapSaver(t, client(t))
			_, ids := putVersions(t, s, "gc", 100)
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

// prunePlan runs a pruner's plan of the namespace "" in steps of 4
// ancestors, and returns the newest checkpoint it keeps.
func prunePlan(t *testing.T, p *pruner) string {
	t.Helper()
	var latest string
	var open []any
	for cursor := ""; ; {
		res, _, err := p.step(context.Background(), "plan", append([]any{"", cursor, 4, latest, p.token}, open...)...)
		if err != nil {
			t.Fatal(err)
		}
		cursor, latest, open = res[0].(string), res[1].(string), res[2:]
		if cursor == "" {
			return latest
		}
	}
}

// pruneDrop runs a pruner's drop of the namespace "" in steps of 16.
func pruneDrop(t *testing.T, p *pruner, latest string) {
	t.Helper()
	for cursor := ""; ; {
		res, _, err := p.step(context.Background(), "drop", "", cursor, 16, latest, p.token)
		if err != nil {
			t.Fatal(err)
		}
		if cursor = res[0].(string); cursor == "" {
			return
		}
	}
}

// pruneFinish runs a pruner's finish of the namespace "" (no event).
func pruneFinish(t *testing.T, p *pruner) {
	t.Helper()
	if _, _, err := p.step(context.Background(), "finish", 0, "", 16, "", p.token, "0", "0", "0", ""); err != nil {
		t.Fatal(err)
	}
}

// TestPruneOverlapping: two PruneKeepLatest of one thread at once. Job b
// plans its keep set; job a plans the namespace anew (its keep set replaces
// b's), drops what it does not keep and finishes, removing its keep set;
// then b drops. b must not drop with a keep set that is not its own (here
// none: it would delete every checkpoint, the newest included); a step that
// finds its token gone ends b's work on the namespace. The newest
// checkpoint and the ancestors its delta channel needs stay.
func TestPruneOverlapping(t *testing.T) {
	for name, client := range overlapBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := overlapSaver(t, client(t))
			cfg, ids := putDeltaChain(t, s, "pr", 100, 90, nil)
			a, b := s.newPruner("pr"), s.newPruner("pr")
			lb := prunePlan(t, b)
			la := prunePlan(t, a)
			pruneDrop(t, a, la)
			pruneFinish(t, a)
			pruneDrop(t, b, lb)
			for i, id := range ids {
				_, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "pr", CheckpointID: id})
				if kept := i >= 90; kept != (err == nil) {
					t.Errorf("checkpoint %d: %v, want it kept: %v", i, err, kept)
				}
			}
			h, err := s.DeltaChannelHistory(ctx, cfg, []string{"log"})
			if err != nil || !h["log"].HasSeed || len(h["log"].Writes) != 9 {
				t.Errorf("delta history after two overlapping prunes: %+v, %v; want the seed and 9 writes", h["log"], err)
			}
		})
	}
}

// TestPruneOverlappingDeleteForRuns: a DeleteForRuns between a
// PruneKeepLatest's plan and its drop deletes the newest checkpoint L the
// plan keeps, and every other checkpoint of its run. The checkpoints older
// than L left (of no run) then hold the namespace's newest: the drop must
// not delete them, which emptied the namespace while the thread's
// namespace set still named it, and every read of the thread answered
// ErrDataLoss. A drop whose L is gone ends, deleting nothing.
func TestPruneOverlappingDeleteForRuns(t *testing.T) {
	for name, client := range overlapBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := overlapSaver(t, client(t))
			// 0..2 of no run, 3 and 4 of run "doomed"; each holds a value of "a".
			var ids []string
			cfg := checkpoint.Config{ThreadID: "pd"}
			for i := range 5 {
				v := fmt.Sprint(i + 1)
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": v},
					ChannelVersions: map[string]string{"a": v}}
				md := checkpoint.Metadata{}
				if i >= 3 {
					md["run_id"] = "doomed"
				}
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, md, map[string]string{"a": v}); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, cfg.CheckpointID)
			}
			p := s.newPruner("pd")
			if l := prunePlan(t, p); l != ids[4] {
				t.Fatalf("the plan keeps %q, want checkpoint 4", l)
			}
			if err := s.DeleteForRuns(ctx, []string{"doomed"}); err != nil {
				t.Fatal(err)
			}
			pruneDrop(t, p, ids[4])
			pruneFinish(t, p)
			got, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "pd"})
			if err != nil || got.Checkpoint.ID != ids[2] {
				t.Fatalf("the latest checkpoint after the prune: %v, want checkpoint 2", err)
			}
			if v, err := violations(ctx, s, "pd"); err != nil || len(v) > 0 {
				t.Errorf("Check: %v %v", v, err)
			}
			// Pruned again, the thread keeps its newest, 2, only.
			if err := s.Prune(ctx, []string{"pd"}, checkpoint.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "pd"}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 1 {
				t.Errorf("after a second prune: %d checkpoints, want 1", n)
			}
		})
	}
}

// TestCopyOverlappingPrune: a copy reads a namespace's checkpoints, then its
// values. A PruneKeepLatest of the source in between deletes checkpoints the
// copy already took and reclaims their values. The copy must not commit
// checkpoints without their values (the target would read them as
// ErrDataLoss): it fails, wrapping checkpoint.ErrNotFound as for a source
// deleted during the copy, and leaves the target without checkpoints.
func TestCopyOverlappingPrune(t *testing.T) {
	for name, client := range overlapBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := overlapSaver(t, client(t))
			putVersions(t, s, "src", 10)
			copyBetweenPhases = func() {
				if err := s.Prune(ctx, []string{"src"}, checkpoint.PruneKeepLatest); err != nil {
					t.Error(err)
				}
			}
			defer func() { copyBetweenPhases = nil }()
			err := s.CopyThread(ctx, "src", "dst")
			copyBetweenPhases = nil
			if !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("CopyThread over a prune of its source: %v, want ErrNotFound", err)
			}
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "dst"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("the target after the failed copy: %v, want ErrNotFound", err)
			}
			// Copied again, the pruned source copies whole.
			if err := s.CopyThread(ctx, "src", "dst"); err != nil {
				t.Fatal(err)
			}
			for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "dst"}) {
				if err != nil || tup.Checkpoint.ChannelValues["a"] != "10" {
					t.Errorf("the copy: %v, %v", tup, err)
				}
			}
		})
	}
}

// TestCopyOverlappingDeleteForRuns: a DeleteForRuns of the source's run
// between a copy's reading of the checkpoints and of the values. The run's
// checkpoint the copy took is then in the run index twice: under the
// source's generation (deleted with it) and under the copy's staging
// generation, which is no thread's generation yet. The DeleteForRuns must
// leave the staging member in the index (it removed it as a retired
// generation's): the copy commits a checkpoint of the run that its run
// index names, which Check requires and a later DeleteForRuns deletes. The
// value it points to stays in the source (a later checkpoint names it), so
// the copy succeeds.
func TestCopyOverlappingDeleteForRuns(t *testing.T) {
	for name, client := range overlapBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := overlapSaver(t, client(t))
			// 0 of run "doomed" writes a=1; 1 (no run) names it and writes b=1.
			cfg := checkpoint.Config{ThreadID: "src"}
			var ids []string
			for i, nv := range []map[string]string{{"a": "1"}, {"b": "1"}} {
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "A", "b": "B"},
					ChannelVersions: map[string]string{"a": "1"}}
				md := checkpoint.Metadata{}
				if i == 0 {
					md["run_id"] = "doomed"
				} else {
					cp.ChannelVersions["b"] = "1"
				}
				var err error
				cfg, err = s.Put(ctx, cfg, cp, md, nv)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, cfg.CheckpointID)
			}
			copyBetweenPhases = func() {
				if err := s.DeleteForRuns(ctx, []string{"doomed"}); err != nil {
					t.Error(err)
				}
			}
			err := s.CopyThread(ctx, "src", "dst")
			copyBetweenPhases = nil
			if err != nil {
				t.Fatal(err)
			}
			if v, err := violations(ctx, s, ""); err != nil || len(v) > 0 {
				t.Fatalf("Check after the copy: %v %v", v, err)
			}
			got, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "dst", CheckpointID: ids[0]})
			if err != nil || got.Checkpoint.ChannelValues["a"] != "A" {
				t.Fatalf("the copied checkpoint of the run: %v, %v", got, err)
			}
			if err := s.DeleteForRuns(ctx, []string{"doomed"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "dst", CheckpointID: ids[0]}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("the copied checkpoint of the run after a second DeleteForRuns: %v, want ErrNotFound", err)
			}
			if v, err := violations(ctx, s, ""); err != nil || len(v) > 0 {
				t.Errorf("Check at the end: %v %v", v, err)
			}
		})
	}
}

// TestDeltaHistoryOverlappingDelete: a delta history walk of several steps,
// and a DeleteForRuns between two of them that deletes the ancestor the next
// step continues from. The walk must not end there as at a parent deleted
// before it (a history cut short with a nil error): it fails with
// checkpoint.ErrDataLoss, as for a thread deleted during the walk. A walk
// that starts after the deletion ends at the deleted parent, with no seed.
func TestDeltaHistoryOverlappingDelete(t *testing.T) {
	for name, client := range overlapBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := overlapSaver(t, client(t))
			// 15..23 belong to run "doomed".
			cfg, ids := putDeltaChain(t, s, "dh", 30, 0, func(i int) string {
				if i >= 15 && i <= 23 {
					return "doomed"
				}
				return ""
			})
			shard := s.layout.Shard("dh")
			step := func(cursor, gen string) ([]any, error) {
				return s.run(ctx, scriptrun.DeltaHistory, []string{s.layout.Head("dh"), s.layout.Threads(shard)},
					s.layout.ShardBase(shard), keys.Encode("dh"), "", ids[29], cursor, gen, 5, "0", "log").Slice()
			}
			res, err := step("", "")
			if err != nil {
				t.Fatal(err)
			}
			if res[2] != ids[23] {
				t.Fatalf("first step's cursor %v, want checkpoint 23", res[2])
			}
			if err := s.DeleteForRuns(ctx, []string{"doomed"}); err != nil {
				t.Fatal(err)
			}
			if _, err := step(ids[23], res[1].(string)); err == nil || !strings.HasPrefix(err.Error(), "CHANGED") {
				t.Errorf("the step after its cursor was deleted: %v, want CHANGED", err)
			}
			h, err := s.DeltaChannelHistory(ctx, cfg, []string{"log"})
			if err != nil || h["log"].HasSeed || len(h["log"].Writes) != 5 {
				t.Errorf("a walk after the deletion: %+v, %v; want the writes of 24..28 and no seed", h["log"], err)
			}
		})
	}
}

// violations returns what Verify finds in s for threadID.
func violations(ctx context.Context, s *Saver, threadID string) ([]Violation, error) {
	res, err := s.Verify(ctx, threadID)
	if err != nil {
		return nil, err
	}
	return res.Violations, nil
}
