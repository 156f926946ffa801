package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// docValue is a value over list.lua's INLINE bytes (32 KiB): a page that
// holds it reads its values by a plain HMGET.
var docValue = strings.Repeat("d", 40<<10)

// docChain puts n checkpoints on thread th, namespace ns: channel "doc"
// holds docValue, written once at the root, and channel "step" a new value
// at every step. It returns their IDs, newest first.
func docChain(t *testing.T, s *redissaver.Saver, th, ns string, n int) []string {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
	var ids []string
	for i := range n {
		ver := fmt.Sprint(i + 1)
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(),
			ChannelValues:   map[string]any{"doc": docValue, "step": fmt.Sprint(ns, i)},
			ChannelVersions: map[string]string{"doc": "1", "step": ver}}
		newVersions := map[string]string{"step": ver}
		if i == 0 {
			newVersions["doc"] = "1"
		}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, newVersions); err != nil {
			t.Fatal(err)
		}
		must(t, s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "step", Value: "w"}}, "task", ""))
		ids = append([]string{cp.ID}, ids...)
	}
	return ids
}

// hmgetRecorder records the fields of every HMGET it sees (seeCommands),
// and runs before (once, when set) ahead of the first.
type hmgetRecorder struct {
	fields [][]string
	before func()
	fired  atomic.Bool
}

// seeCommands is a go-redis hook that shows every command the client
// sends, alone or in a pipeline, to its function first.
type seeCommands func(redis.Cmder)

func (f seeCommands) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f seeCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f(cmd)
		return next(ctx, cmd)
	}
}
func (f seeCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			f(c)
		}
		return next(ctx, cmds)
	}
}

func (r *hmgetRecorder) see(cmd redis.Cmder) {
	if cmd.Name() != "hmget" {
		return
	}
	var fields []string
	for _, a := range cmd.Args()[2:] {
		fields = append(fields, fmt.Sprint(a))
	}
	r.fields = append(r.fields, fields)
	if r.before != nil && !r.fired.Swap(true) {
		r.before()
	}
}

// loseDoc deletes the value of docChain's "doc" from thread "big"'s values
// hash: lost data.
func loseDoc(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver) {
	t.Helper()
	ctx := context.Background()
	gen, err := rdb.HGet(ctx, keys.Of(s).Head("big"), "g").Result()
	must(t, err)
	blobs := keys.Of(s).Blobs("big", gen, "")
	fields, err := rdb.HKeys(ctx, blobs).Result()
	must(t, err)
	for _, f := range fields {
		if strings.HasPrefix(f, "3:doc1") {
			must(t, rdb.HDel(ctx, blobs, f).Err())
		}
	}
}

// listAll lists q and returns the tuples, failing on an error.
func listAll(t *testing.T, s *redissaver.Saver, q checkpoint.ListQuery) []*checkpoint.Tuple {
	t.Helper()
	var out []*checkpoint.Tuple
	for tup, err := range s.List(context.Background(), q) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tup)
	}
	return out
}

// TestListValuesOutOfLua: a page whose values hold more than 32 KiB takes
// them by a plain HMGET in a second round trip, each value once however
// many checkpoints point to it, one HMGET per namespace; every tuple is what
// GetTuple reads of it; so does a listing of every thread of a saver of one
// shard. A page of small values takes them from the script in one round
// trip.
func TestListValuesOutOfLua(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb := b.client(t)
			rec := &hmgetRecorder{}
			rdb.AddHook(seeCommands(rec.see))
			ctr := redistest.CountRoundTrips(rdb)
			s := newSaver(t, rdb, redissaver.Options{Shards: 1}) // a listing of every thread walks one index
			ctx := context.Background()
			root := docChain(t, s, "big", "", 5)
			docChain(t, s, "big", "sub", 3)
			// A checkpoint that names no channel: its namespace has no value to
			// read, and no HMGET (one of no field is an error).
			_, err := s.Put(ctx, checkpoint.Config{ThreadID: "big", CheckpointNS: "bare"}, checkpoint.Checkpoint{V: 4,
				ID: checkpoint.NewID()}, nil, nil)
			must(t, err)
			_, err = s.Put(ctx, checkpoint.Config{ThreadID: "small"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(),
				ChannelValues: map[string]any{"a": "x"}, ChannelVersions: map[string]string{"a": "1"}}, nil, map[string]string{"a": "1"})
			must(t, err)
			must(t, s.LoadScripts(ctx))
			fresh, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(s).Prefix(), Shards: 1, AcceptEviction: true})
			must(t, err)

			ns := ""
			for _, c := range []struct {
				name   string
				q      checkpoint.ListQuery
				ids    int
				trips  int64
				hmgets int // plain HMGETs of values (one per namespace of the page)
				fields int // blob fields they ask for in all
			}{
				{"namespace", checkpoint.ListQuery{ThreadID: "big", CheckpointNS: &ns}, 5, 2, 1, 1 + 5},
				{"thread", checkpoint.ListQuery{ThreadID: "big"}, 9, 2, 2, 2 + 8},
				{"every thread", checkpoint.ListQuery{}, 10, 2, 3, 3 + 8}, // the small thread's value too
				{"small values", checkpoint.ListQuery{ThreadID: "small"}, 1, 1, 0, 0},
			} {
				t.Run(c.name, func(t *testing.T) {
					ctr.Reset()
					rec.fields = nil
					got := listAll(t, s, c.q)
					if len(got) != c.ids {
						t.Fatalf("%d tuples, want %d", len(got), c.ids)
					}
					if n := ctr.Load(); n != c.trips {
						t.Errorf("%d round trips (%v), want %d", n, ctr.Commands(), c.trips)
					}
					fields := 0
					for _, f := range rec.fields {
						fields += len(f)
					}
					if len(rec.fields) != c.hmgets || fields != c.fields {
						t.Errorf("HMGETs %v, want %d of %d fields in all", rec.fields, c.hmgets, c.fields)
					}
					for _, tup := range got {
						want, err := fresh.GetTuple(ctx, tup.Config)
						must(t, err)
						if !reflect.DeepEqual(tup, want) {
							t.Fatalf("listed %+v, GetTuple read %+v", tup, want)
						}
						if tup.Config.ThreadID == "big" && tup.Config.CheckpointNS != "bare" && tup.Checkpoint.ChannelValues["doc"] != docValue {
							t.Fatalf("checkpoint %s: doc of %d bytes", tup.Config.CheckpointID, len(fmt.Sprint(tup.Checkpoint.ChannelValues["doc"])))
						}
					}
					if c.q.CheckpointNS != nil {
						for i, tup := range got {
							if tup.Config.CheckpointID != root[i] {
								t.Fatalf("listed %s at %d, want %s", tup.Config.CheckpointID, i, root[i])
							}
						}
					}
				})
			}
		})
	}
}

// TestListValueGoneBetweenRoundTrips: a value that goes between a page's
// two round trips sends the page back to the script, which answers for the
// state it finds: ErrDataLoss for a value lost while its checkpoint points
// to it, nothing for a thread deleted, the new thread for one deleted and
// written again.
func TestListValueGoneBetweenRoundTrips(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			for _, c := range []struct {
				name string
				do   func(t *testing.T, rdb redis.UniversalClient, s, other *redissaver.Saver)
				ids  int
				loss bool
			}{
				{"value lost", func(t *testing.T, rdb redis.UniversalClient, s, _ *redissaver.Saver) {
					loseDoc(t, rdb, s)
				}, 0, true},
				{"thread deleted", func(t *testing.T, _ redis.UniversalClient, _, other *redissaver.Saver) {
					must(t, other.DeleteThread(ctx, "big"))
				}, 0, false},
				{"thread deleted and written again", func(t *testing.T, _ redis.UniversalClient, _, other *redissaver.Saver) {
					must(t, other.DeleteThread(ctx, "big"))
					_, err := other.Put(ctx, checkpoint.Config{ThreadID: "big"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(),
						ChannelValues: map[string]any{"a": "x"}, ChannelVersions: map[string]string{"a": "1"}}, nil, map[string]string{"a": "1"})
					must(t, err)
				}, 1, false},
			} {
				t.Run(c.name, func(t *testing.T) {
					rdb := b.client(t)
					rec := &hmgetRecorder{}
					rdb.AddHook(seeCommands(rec.see))
					s := newSaver(t, rdb, redissaver.Options{})
					docChain(t, s, "big", "", 3)
					must(t, s.LoadScripts(ctx))
					other, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(s).Prefix(), AcceptEviction: true})
					must(t, err)
					// Before the page's plain HMGET of its values (after its script).
					rec.before = func() { c.do(t, rdb, s, other) }
					ns := ""
					var got []*checkpoint.Tuple
					var lerr error
					for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "big", CheckpointNS: &ns}) {
						if err != nil {
							lerr = err
							break
						}
						got = append(got, tup)
					}
					if c.loss != errors.Is(lerr, checkpoint.ErrDataLoss) || (!c.loss && lerr != nil) {
						t.Fatalf("error %v, want data loss %v", lerr, c.loss)
					}
					if len(got) != c.ids {
						t.Fatalf("%d tuples, want %d", len(got), c.ids)
					}
				})
			}
		})
	}
}

// TestListValueWrittenAgainBetweenRoundTrips: between a page's two round
// trips, a checkpoint of the page is deleted (DeleteForRuns), the reclaim
// removes the value it alone pointed to, and a later Put writes that field
// again: another value under the same version, or the empty marker of a
// version it names without a value. The page's HMGET then reads that, not
// the deleted checkpoint's value: it must not answer it (the marker would
// read the channel absent). The token of
// each checkpoint, read in the same transaction, tells that it went, and the
// script reads the page again.
func TestListValueWrittenAgainBetweenRoundTrips(t *testing.T) {
	for _, b := range backends {
		for _, c := range []struct {
			name   string
			values map[string]any // what the later Put writes of version "9" of "step"
			nv     map[string]string
		}{
			{"another value", map[string]any{"step": "nine again"}, map[string]string{"step": "9"}},
			{"the empty marker", map[string]any{}, map[string]string{}},
		} {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				rdb := b.client(t)
				rec := &hmgetRecorder{}
				rdb.AddHook(seeCommands(rec.see))
				s := newSaver(t, rdb, redissaver.Options{})
				ids := docChain(t, s, "big", "", 3)
				// A saver that knows no generation of the thread puts its child
				// through the script: the value goes under the plain version.
				fresh, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(s).Prefix(), AcceptEviction: true})
				must(t, err)
				x, err := fresh.Put(ctx, checkpoint.Config{ThreadID: "big", CheckpointID: ids[0]}, checkpoint.Checkpoint{V: 4,
					ID: checkpoint.NewID(), ChannelValues: map[string]any{"step": "nine"},
					ChannelVersions: map[string]string{"doc": "1", "step": "9"}}, checkpoint.Metadata{"run_id": "doomed"},
					map[string]string{"step": "9"})
				must(t, err)
				must(t, s.LoadScripts(ctx))
				var z checkpoint.Config
				rec.before = func() {
					must(t, s.DeleteForRuns(ctx, []string{"doomed"}))
					z, err = s.Put(ctx, checkpoint.Config{ThreadID: "big"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(),
						ChannelValues: c.values, ChannelVersions: map[string]string{"step": "9"}}, nil, c.nv)
					must(t, err)
				}
				ns := ""
				got := listAll(t, s, checkpoint.ListQuery{ThreadID: "big", CheckpointNS: &ns})
				if !rec.fired.Load() {
					t.Fatal("the page read no value by HMGET")
				}
				var listed []string
				for _, tup := range got {
					listed = append(listed, tup.Config.CheckpointID)
					if tup.Config.CheckpointID == x.CheckpointID {
						t.Errorf("the deleted checkpoint listed: %v", tup.Checkpoint.ChannelValues["step"])
					}
				}
				if want := []string{z.CheckpointID, ids[0], ids[1], ids[2]}; !reflect.DeepEqual(listed, want) {
					t.Errorf("listed %v, want %v", listed, want)
				}
			})
		}
	}
}

// TestGetTupleValuesOutOfLua: GetTuple of a checkpoint whose values hold
// more than 32 KiB takes them by a plain HMGET in a second round trip (the
// latest, by id, and each checkpoint of a listing of every thread over
// several shards); one
// gone in between sends the read back to the script: ErrDataLoss for a value
// lost, ErrNotFound for a thread deleted.
func TestGetTupleValuesOutOfLua(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := b.client(t)
			rec := &hmgetRecorder{}
			rdb.AddHook(seeCommands(rec.see))
			ctr := redistest.CountRoundTrips(rdb)
			s := newSaver(t, rdb, redissaver.Options{})
			ids := docChain(t, s, "big", "", 3)
			docChain(t, s, "other", "", 2)
			must(t, s.LoadScripts(ctx))
			read := func(t *testing.T, cfg checkpoint.Config) (*checkpoint.Tuple, error) {
				t.Helper()
				fresh, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(s).Prefix(), AcceptEviction: true})
				must(t, err)
				ctr.Reset()
				rec.fields = nil
				return fresh.GetTuple(ctx, cfg)
			}
			for _, cfg := range []checkpoint.Config{{ThreadID: "big"}, {ThreadID: "big", CheckpointID: ids[1]}} {
				tup, err := read(t, cfg)
				must(t, err)
				want := map[string]any{"doc": docValue, "step": "1"}
				if cfg.CheckpointID == "" {
					want["step"] = "2"
				}
				if !reflect.DeepEqual(tup.Checkpoint.ChannelValues, want) || len(tup.PendingWrites) != 1 {
					t.Fatalf("%+v: values of %d channels, %d pending writes", cfg, len(tup.Checkpoint.ChannelValues), len(tup.PendingWrites))
				}
				if n := ctr.Load(); n != 2 || len(rec.fields) != 1 || len(rec.fields[0]) != 2 {
					t.Fatalf("%+v: %d round trips (%v), HMGETs %v; want the script, then one HMGET of 2 fields", cfg, n, ctr.Commands(), rec.fields)
				}
			}

			// A listing of every thread over 16 shards: members, the checkpoints
			// by get_tuple.lua, their values by HMGET.
			lister, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(s).Prefix(), AcceptEviction: true})
			must(t, err)
			ctr.Reset()
			got := listAll(t, lister, checkpoint.ListQuery{})
			if len(got) != 5 || ctr.Load() != 3 {
				t.Fatalf("listed %d checkpoints in %d round trips (%v), want 5 in 3", len(got), ctr.Load(), ctr.Commands())
			}
			for _, tup := range got {
				if doc, _ := tup.Checkpoint.ChannelValues["doc"].(string); !strings.HasPrefix(doc, docValue) {
					t.Fatalf("%s: doc of %d bytes", tup.Config.CheckpointID, len(fmt.Sprint(tup.Checkpoint.ChannelValues["doc"])))
				}
			}

			for _, c := range []struct {
				name, thread string
				do           func(t *testing.T)
				want         error
			}{
				{"value lost", "big", func(t *testing.T) { loseDoc(t, rdb, s) }, checkpoint.ErrDataLoss},
				{"thread deleted", "other", func(t *testing.T) { must(t, s.DeleteThread(ctx, "other")) }, checkpoint.ErrNotFound},
			} {
				t.Run(c.name, func(t *testing.T) {
					rec.fired.Store(false)
					rec.before = func() { c.do(t) }
					defer func() { rec.before = nil }()
					if _, err := read(t, checkpoint.Config{ThreadID: c.thread}); !errors.Is(err, c.want) {
						t.Fatalf("%v, want %v", err, c.want)
					}
					if !rec.fired.Load() {
						t.Fatal("no plain HMGET of the values")
					}
				})
			}
		})
	}
}
