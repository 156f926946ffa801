package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
)

// TestFullUnderEveryPolicy is the adversarial fill of issue 36: 60 threads
// write checkpoints (a 3 KB channel "big" at a new version every other
// step, named unchanged in between; a channel "cfg" written once; three
// pending writes per step) until Redis is full, under each eviction
// policy, and go on writing past the failures as a runtime that moves on
// would (the next step's parent is the checkpoint whose Put failed, so it
// names a version of "big" that was never stored). Then the limit is
// lifted and every failed Put is sent again, newest first. Every checkpoint then reads
// back exact, by id, as the latest and in List (each version of "big" the
// value its Put wrote, whichever Put came first; absent when that Put never
// succeeded, as in LangGraph's savers), or, only under the
// allkeys-* policies (which may evict the saver's keys), fails with
// ErrDataLoss: never a checkpoint with missing or other values and a nil
// error.
func TestFullUnderEveryPolicy(t *testing.T) {
	for _, c := range []struct {
		policy string
		opts   redissaver.Options
		loss   bool // keys of the saver may be evicted
	}{
		{"noeviction", redissaver.Options{}, false},
		{"volatile-lru", redissaver.Options{TTL: time.Hour}, false},
		{"volatile-ttl", redissaver.Options{TTL: time.Hour}, false},
		{"allkeys-lru", redissaver.Options{AcceptEviction: true}, true},
		{"allkeys-lfu", redissaver.Options{AcceptEviction: true}, true},
	} {
		t.Run(c.policy, func(t *testing.T) {
			c.opts.Shards = 4
			rdb, s := evictionServer(t, c.policy, c.opts)
			ctx := context.Background()
			type put struct {
				cfg    checkpoint.Config
				cp     checkpoint.Checkpoint
				nv     map[string]string
				writes int
				ok     bool
			}
			type thread struct {
				name string
				puts []*put
			}
			threads := make([]*thread, 60)
			for i := range threads {
				threads[i] = &thread{name: fmt.Sprint("full-", i)}
			}
			failures, after := map[string]int{}, -1
			write := func(p *put) error {
				stored, err := s.Put(ctx, p.cfg, p.cp, checkpoint.Metadata{"step": len(p.cp.ID)}, p.nv)
				if err != nil {
					return err
				}
				p.ok = true
				for w := p.writes; w < 3; w++ {
					if err := s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "log", Value: fmt.Sprint(p.cp.ID, "/", w)}}, fmt.Sprint("task-", w), ""); err != nil {
						return err
					}
					p.writes++
				}
				return nil
			}
			for round := 0; round < 300 && after != 0; round++ {
				for _, th := range threads {
					p := &put{cfg: checkpoint.Config{ThreadID: th.name}, nv: map[string]string{}}
					bigAt := round - round%2 // big changes every other step
					p.cp = checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("%06d", round), ChannelValues: map[string]any{},
						ChannelVersions: map[string]string{"big": fmt.Sprint(bigAt + 1), "cfg": "1"}}
					if round == bigAt {
						p.cp.ChannelValues["big"] = fmt.Sprintf("%s-%d-%s", th.name, round, strings.Repeat("b", 3000))
						p.nv["big"] = fmt.Sprint(bigAt + 1)
					}
					if round == 0 {
						p.cp.ChannelValues["cfg"], p.nv["cfg"] = "config", "1"
					} else {
						p.cfg.CheckpointID = th.puts[round-1].cp.ID
					}
					th.puts = append(th.puts, p)
					if err := write(p); err != nil {
						failures[errKind(err)]++
					}
				}
				switch {
				case after > 0:
					after--
				case after < 0 && (len(failures) > 0 || evictedKeys(t, rdb) > 0):
					after = 20
				}
			}
			t.Logf("%s: failures %v; %d keys evicted", c.policy, failures, evictedKeys(t, rdb))
			if len(failures) == 0 && evictedKeys(t, rdb) == 0 {
				t.Fatal("Redis never filled: the test proves nothing")
			}
			// The operator lifts the limit (reads may evict under allkeys-*
			// too); the callers send their failed calls again.
			must(t, rdb.ConfigSet(ctx, "maxmemory", "0").Err())
			for _, th := range threads {
				for _, p := range slices.Backward(th.puts) { // newest first: children before their parents
					if err := write(p); err != nil && !(c.loss && errors.Is(err, checkpoint.ErrDataLoss)) {
						t.Errorf("%s %s sent again: %v", th.name, p.cp.ID, err)
					}
				}
			}
			losses := 0
			judge := func(what string, tup *checkpoint.Tuple, err error, th *thread, p *put) {
				t.Helper()
				if err != nil {
					if !c.loss || !errors.Is(err, checkpoint.ErrDataLoss) {
						t.Errorf("%s: %v", what, err)
					}
					losses++
					return
				}
				// Each version reads the value its Put wrote; a version whose
				// Put never succeeded was never written, and reads absent (as in
				// LangGraph's savers).
				want := map[string]any{}
				for _, q := range th.puts {
					for ch, v := range q.cp.ChannelValues {
						if q.ok && q.nv[ch] != "" && q.nv[ch] == p.cp.ChannelVersions[ch] {
							want[ch] = v
						}
					}
				}
				if tup.Checkpoint.ID != p.cp.ID || fmt.Sprint(tup.Checkpoint.ChannelValues) != fmt.Sprint(want) || len(tup.PendingWrites) != p.writes {
					l := keys.Of(s)
					g := rdb.HGet(ctx, l.Head(th.name), "g").Val()
					t.Logf("DEBUG %s gen %s versions %v blobs %q exists %v", what, g, tup.Checkpoint.ChannelVersions, rdb.HGetAll(ctx, l.Blobs(th.name, g, "")).Val()["3:cfg1"], rdb.HExists(ctx, l.Blobs(th.name, g, ""), "3:cfg1").Val())
					for _, q := range th.puts[:3] {
						t.Logf("DEBUG put %s ok=%v", q.cp.ID, q.ok)
					}
					t.Logf("DEBUG keys %v", rdb.Keys(ctx, l.Prefix()+":*t:"+th.name+":*").Val())
					t.Logf("DEBUG root hash %v", rdb.HGetAll(ctx, l.Checkpoint(th.name, g, "", "000000")).Val())
					t.Logf("DEBUG cp hash %v", rdb.HGetAll(ctx, l.Checkpoint(th.name, g, "", tup.Checkpoint.ID)).Val())
					t.Errorf("%s: read %s with %d values and %d writes, want %s with %d and %d (a nil error)", what, tup.Checkpoint.ID,
						len(tup.Checkpoint.ChannelValues), len(tup.PendingWrites), p.cp.ID, len(want), p.writes)
				}
			}
			for _, th := range threads {
				var stored []*put
				for _, p := range th.puts {
					if p.ok {
						stored = append(stored, p)
					}
				}
				if len(stored) == 0 {
					continue
				}
				tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th.name})
				judge(th.name+" latest", tup, err, th, stored[len(stored)-1])
				for _, p := range stored {
					tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th.name, CheckpointID: p.cp.ID})
					judge(th.name+" by id "+p.cp.ID, tup, err, th, p)
				}
				i := len(stored) - 1
				for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th.name}) {
					if err != nil || i < 0 {
						judge(th.name+" list", tup, err, th, &put{})
						break
					}
					judge(th.name+" list", tup, err, th, stored[i])
					i--
				}
			}
			t.Logf("%s: %d reads answered ErrDataLoss", c.policy, losses)
		})
	}
}

// TestFullRedisRefusesWholeAndEmpties: on a full Redis under noeviction,
// every write that would grow memory (Put to a live or a new thread,
// PutWrites, CopyThread) is refused with the Redis OOM error and leaves
// every key as it was, byte for byte; every operation that frees memory
// (DeleteThread, Prune, DeleteForRuns, Sweep) runs, so that an operator
// can always make room; once it has, writes are accepted again.
func TestFullRedisRefusesWholeAndEmpties(t *testing.T) {
	rdb, s := evictionServer(t, "noeviction", redissaver.Options{Shards: 2})
	ctx := context.Background()
	var lasts []checkpoint.Config
	full := false
	for th := 0; th < 400 && !full; th++ {
		cfg := checkpoint.Config{ThreadID: fmt.Sprint("full-", th)}
		for step := range 10 {
			cp := checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("%06d", step),
				ChannelValues: map[string]any{"big": strings.Repeat("f", 4000)}, ChannelVersions: map[string]string{"big": fmt.Sprint(step + 1)}}
			next, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step, "run_id": fmt.Sprint("run-", th%3)}, map[string]string{"big": fmt.Sprint(step + 1)})
			if err != nil {
				if !strings.Contains(err.Error(), "OOM") {
					t.Fatalf("Put: %v, want OOM", err)
				}
				full = true
				break
			}
			cfg = next
		}
		if cfg.CheckpointID != "" {
			lasts = append(lasts, cfg)
		}
	}
	if !full || len(lasts) < 4 {
		t.Fatalf("Redis did not fill (%d threads)", len(lasts))
	}
	before := rawState(t, rdb, "ev")
	for name, call := range map[string]func() error{
		"Put to a live thread": func() error {
			_, err := s.Put(ctx, lasts[0], checkpoint.Checkpoint{V: 4, ID: "999999", ChannelValues: map[string]any{"big": "x"},
				ChannelVersions: map[string]string{"big": "99"}}, nil, map[string]string{"big": "99"})
			return err
		},
		"Put to a new thread": func() error {
			_, err := s.Put(ctx, checkpoint.Config{ThreadID: "new"}, checkpoint.Checkpoint{V: 4, ID: "1"}, nil, nil)
			return err
		},
		"PutWrites": func() error {
			return s.PutWrites(ctx, lasts[0], []checkpoint.Write{{Channel: "w", Value: strings.Repeat("w", 100)}}, "task", "")
		},
		"CopyThread": func() error { return s.CopyThread(ctx, lasts[0].ThreadID, "copy") },
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "OOM") {
			t.Errorf("%s on a full Redis: %v, want the OOM error", name, err)
		}
		if after := rawState(t, rdb, "ev"); !slices.Equal(after, before) {
			t.Errorf("%s on a full Redis changed keys", name)
		}
	}
	used := infoInt(t, rdb, "memory", "used_memory")
	must(t, s.DeleteThread(ctx, lasts[0].ThreadID))
	if _, err := s.GetTuple(ctx, lasts[0]); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("GetTuple after DeleteThread: %v, want ErrNotFound", err)
	}
	must(t, s.Prune(ctx, []string{lasts[1].ThreadID}, checkpoint.PruneKeepLatest))
	must(t, s.DeleteForRuns(ctx, []string{"run-2"}))
	_, err := s.Sweep(ctx)
	must(t, err)
	if freed := used - infoInt(t, rdb, "memory", "used_memory"); freed <= 0 {
		t.Errorf("the deletions freed %d bytes", freed)
	}
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "new"}, checkpoint.Checkpoint{V: 4, ID: "1"}, nil, nil); err != nil {
		t.Errorf("Put once room was made: %v", err)
	}
}
