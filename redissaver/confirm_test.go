package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// TestPlainConfirmation: a saver's GetTuple of the checkpoint it predicts
// (the one it last wrote or read) is confirmed by plain reads in one
// transaction, no script, and answers what get_tuple.lua answers. Whatever
// changed since the prediction (another saver's Put or re-put, a deleted or
// recreated thread, a lease, lost data), the answer is get_tuple.lua's, in
// a second round trip: never the predicted checkpoint when it is no longer
// the answer, never a missing key read as absent. After a refutation by
// another writer the saver confirms that namespace's predictions in the
// script (one round trip), and one with a TTL always does; after a
// deletion it predicts nothing until it learns the thread again.
func TestPlainConfirmation(t *testing.T) {
	type env struct {
		rdb          redis.UniversalClient
		a, other     *redissaver.Saver
		c1, c2       checkpoint.Config
		head, gen    string
		layout       keys.Layout
		cpKey, blobs string
	}
	var legacyID string // set by its case: newer than the checkpoints before it
	cases := []struct {
		name    string
		change  func(t *testing.T, e env) // after a's Puts of c1 and c2
		want    func(e env) string        // the checkpoint GetTuple of the latest answers ("" for none)
		wantErr error
		refuted bool
	}{
		{name: "unchanged", want: func(e env) string { return e.c2.CheckpointID }},
		{name: "another saver's newer checkpoint", refuted: true,
			change: func(t *testing.T, e env) { stagedStep(t, e.other, e.c2, 2) },
			want:   func(e env) string { return "" }}, // checked against a fresh saver's answer
		{name: "the predicted checkpoint put again by another saver", refuted: true,
			change: func(t *testing.T, e env) {
				cp := checkpoint.Checkpoint{V: 4, ID: e.c2.CheckpointID, ChannelValues: map[string]any{"a": "value 1", "b": "kept"},
					ChannelVersions: map[string]string{"a": "2", "b": "1"}}
				if _, err := e.other.Put(context.Background(), e.c1, cp, checkpoint.Metadata{"step": 1, "note": "again"}, map[string]string{"a": "2"}); err != nil {
					t.Fatal(err)
				}
			},
			want: func(e env) string { return e.c2.CheckpointID }},
		{name: "thread deleted", refuted: true, wantErr: checkpoint.ErrNotFound,
			change: func(t *testing.T, e env) { must(t, e.other.DeleteThread(context.Background(), "t")) }},
		{name: "thread deleted and written again", refuted: true,
			change: func(t *testing.T, e env) {
				must(t, e.other.DeleteThread(context.Background(), "t"))
				stagedChain(t, e.other, "t", 1)
			},
			want: func(e env) string { return "" }},
		{name: "a lease ahead", refuted: true,
			change: func(t *testing.T, e env) {
				must(t, e.rdb.HSet(context.Background(), e.head, keys.HeadLease, fmt.Sprint(time.Now().Add(time.Hour).UnixMilli())).Err())
			},
			want: func(e env) string { return e.c2.CheckpointID }},
		{name: "a lease past", refuted: true, wantErr: checkpoint.ErrNotFound,
			change: func(t *testing.T, e env) {
				must(t, e.rdb.HSet(context.Background(), e.head, keys.HeadLease, "1000").Err())
			}},
		{name: "checkpoint hash lost", refuted: true, wantErr: checkpoint.ErrDataLoss,
			change: func(t *testing.T, e env) { must(t, e.rdb.Del(context.Background(), e.cpKey).Err()) }},
		{name: "namespace index lost", refuted: true, wantErr: checkpoint.ErrDataLoss,
			change: func(t *testing.T, e env) {
				must(t, e.rdb.Del(context.Background(), e.layout.Index("t", e.gen, "")).Err())
			}},
		{name: "namespace set lost", refuted: true, wantErr: checkpoint.ErrDataLoss,
			change: func(t *testing.T, e env) {
				must(t, e.rdb.Del(context.Background(), e.layout.Namespaces("t", e.gen)).Err())
			}},
		{name: "thread head lost", refuted: true, wantErr: checkpoint.ErrDataLoss,
			change: func(t *testing.T, e env) { must(t, e.rdb.Del(context.Background(), e.head).Err()) }},
		{name: "a checkpoint of format 3 with a parent", refuted: true, // its reader takes the parent's sends
			change: func(t *testing.T, e env) {
				ctx := context.Background()
				legacyID = checkpoint.NewID()
				must(t, e.a.PutWrites(ctx, e.c2, []checkpoint.Write{{Channel: checkpoint.TasksChannel, Value: "send"}}, "task", ""))
				cp := checkpoint.Checkpoint{V: 3, ID: legacyID, ChannelValues: map[string]any{"a": "value 2", "b": "kept"},
					ChannelVersions: map[string]string{"a": "3", "b": "1"}}
				if _, err := e.a.Put(ctx, e.c2, cp, checkpoint.Metadata{"step": 2}, map[string]string{"a": "3"}); err != nil {
					t.Fatal(err)
				}
			},
			want: func(e env) string { return legacyID }},
		{name: "a predicted value lost", wantErr: checkpoint.ErrDataLoss,
			change: func(t *testing.T, e env) {
				must(t, e.rdb.HDel(context.Background(), e.blobs, storedBlobField(t, e.rdb, e.blobs, "a", "2")).Err())
			}},
	}
	for _, b := range backends {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				rdb, rec, ctr, a := observedSaver(t, b.client)
				other, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(a).Prefix(), AcceptEviction: true})
				must(t, err)
				e := env{rdb: rdb, a: a, other: other, layout: keys.Of(a), head: keys.Of(a).Head("t")}
				e.c1 = stagedStep(t, a, checkpoint.Config{ThreadID: "t"}, 0)
				e.c2 = stagedStep(t, a, e.c1, 1)
				e.gen = rdb.HGet(ctx, e.head, keys.HeadGeneration).Val()
				e.cpKey = e.layout.Checkpoint("t", e.gen, "", e.c2.CheckpointID)
				e.blobs = e.layout.Blobs("t", e.gen, "")
				if tc.change != nil {
					tc.change(t, e)
				}
				rec.txs = nil
				ctr.Reset()
				got, err := a.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
				cmds, trips, txs := ctr.Commands(), ctr.Load(), rec.txs
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("GetTuple: %+v, %v; want %v", got, err, tc.wantErr)
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					// The answer is what a saver that predicts nothing reads.
					fresh, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: keys.Of(a).Prefix(), AcceptEviction: true})
					must(t, err)
					want, err := fresh.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
					must(t, err)
					if id := tc.want(e); id != "" && want.Config.CheckpointID != id {
						t.Fatalf("the unpredicted read answers %s, want %s", want.Config.CheckpointID, id)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("predicted read:\n%+v\nunpredicted:\n%+v", got, want)
					}
				}
				// The first round trip is the plain transaction, no script.
				if len(txs) == 0 || slices.Contains(txs[0], "evalsha") || !slices.Contains(txs[0], "hgetall") {
					t.Fatalf("transactions %v, want the plain reads first", txs)
				}
				wantTrips := int64(1)
				if tc.refuted {
					wantTrips = 2
				}
				if trips != wantTrips {
					t.Fatalf("%d round trips (%v), want %d", trips, cmds, wantTrips)
				}
				if tc.name == "thread deleted" {
					// Nothing is left to predict: the next read is the script's
					// alone, and once the saver writes the thread again its
					// reads are confirmed by plain reads again (a deleted
					// thread is not another writer).
					requireUnpredictedMiss(t, a, rec, ctr, "")
					requirePlainLatest(t, a, rec, ctr, stagedChain(t, a, "t", 2))
					return
				}
				if !tc.refuted || tc.wantErr != nil {
					return
				}
				// Refuted once, the namespace's next prediction is confirmed by
				// the script, in one round trip.
				rec.txs = nil
				ctr.Reset()
				again, err := a.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
				must(t, err)
				if !reflect.DeepEqual(again, got) {
					t.Fatalf("read again: %+v, want %+v", again, got)
				}
				if n := ctr.Load(); n != 1 || len(rec.txs) != 1 || !slices.Contains(rec.txs[0], "evalsha") {
					t.Fatalf("read again: %d round trips, transactions %v; want the script's confirmation", n, rec.txs)
				}
			})
		}
	}
}

// TestPlainConfirmationOff: a saver with a TTL confirms its predictions in
// the script (which judges and, with RefreshOnRead, renews leases on
// Redis's clock).
func TestPlainConfirmationOff(t *testing.T) {
	for _, opts := range []redissaver.Options{{TTL: time.Hour}, {TTL: time.Hour, RefreshOnRead: true}} {
		t.Run(fmt.Sprint("refresh_", opts.RefreshOnRead), func(t *testing.T) {
			rdb := redistest.Real(t)
			rec := &txRecorder{}
			rdb.AddHook(rec)
			s := newSaver(t, rdb, opts)
			ctx := context.Background()
			c2 := stagedChain(t, s, "t", 2)
			must(t, s.LoadScripts(ctx))
			rec.txs = nil
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
			if err != nil || tup.Config.CheckpointID != c2.CheckpointID {
				t.Fatalf("GetTuple: %+v, %v", tup, err)
			}
			if len(rec.txs) != 1 || !slices.Contains(rec.txs[0], "evalsha") || !slices.Contains(rec.txs[0], "hmget") {
				t.Fatalf("transactions %v, want the script's confirmation", rec.txs)
			}
		})
	}
}

// TestOwnDeleteForgetsPredictions: a saver that deletes a thread forgets
// what it knew of it: its next read predicts nothing (the script alone, one
// round trip), its next Put stages for a new thread (one round trip, not a
// second staging into the old generation), and its reads after that are
// confirmed by plain reads again.
func TestOwnDeleteForgetsPredictions(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			_, rec, ctr, s := observedSaver(t, b.client)
			for _, ns := range []string{"", "sub"} {
				c := stagedStep(t, s, checkpoint.Config{ThreadID: "t", CheckpointNS: ns}, 0)
				if _, err := s.GetTuple(ctx, c); err != nil { // a hint by id too
					t.Fatal(err)
				}
			}
			must(t, s.DeleteThread(ctx, "t"))
			for _, ns := range []string{"", "sub"} {
				requireUnpredictedMiss(t, s, rec, ctr, ns)
			}
			ctr.Reset()
			c := stagedStep(t, s, checkpoint.Config{ThreadID: "t"}, 0)
			if n := ctr.Load(); n != 1 {
				t.Fatalf("Put after the delete: %d round trips (%v), want 1", n, ctr.Commands())
			}
			requirePlainLatest(t, s, rec, ctr, stagedStep(t, s, c, 1))
		})
	}
}

// TestDeleteForRunsForgetsPredictions: DeleteForRuns of the run of a
// namespace's latest checkpoint makes the saver forget what it predicted of
// the thread: its next read of the latest is the script alone (one round
// trip, not a refuted plain confirmation and a second), and the namespace is
// not taken for another writer's (the read after it is confirmed by plain
// reads).
func TestDeleteForRunsForgetsPredictions(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			_, rec, ctr, s := observedSaver(t, b.client)
			cfg := checkpoint.Config{ThreadID: "t"}
			var kept checkpoint.Config
			for i, run := range []string{"keep", "drop"} {
				var err error
				cfg, err = s.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": run},
					ChannelVersions: map[string]string{"a": fmt.Sprint(i + 1)}}, checkpoint.Metadata{"run_id": run}, map[string]string{"a": fmt.Sprint(i + 1)})
				must(t, err)
				if i == 0 {
					kept = cfg
				}
			}
			must(t, s.DeleteForRuns(ctx, []string{"drop"}))
			rec.txs = nil
			ctr.Reset()
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "t"})
			if err != nil || tup.Config.CheckpointID != kept.CheckpointID {
				t.Fatalf("latest after DeleteForRuns: %+v, %v; want %s", tup, err, kept.CheckpointID)
			}
			if n := ctr.Load(); n != 1 || len(rec.txs) != 0 {
				t.Fatalf("latest after DeleteForRuns: %d round trips (%v), transactions %v; want the script alone", n, ctr.Commands(), rec.txs)
			}
			requirePlainLatest(t, s, rec, ctr, kept)
		})
	}
}

// TestOutOfOrderPutsKeepLatestPrediction: a saver whose Puts to a
// namespace end out of id order (a Put of an older checkpoint after a newer
// one: concurrent writers of the saver, or a re-put of an older checkpoint)
// keeps predicting the newest it wrote, the namespace's latest: its read of
// the latest is confirmed by plain reads (one round trip, no script), not a
// refuted prediction, a second round trip and the namespace taken for
// another writer's.
func TestOutOfOrderPutsKeepLatestPrediction(t *testing.T) {
	put := func(s *redissaver.Saver, parent checkpoint.Config, id string, i int) (checkpoint.Config, error) {
		ver := fmt.Sprint(i + 1)
		return s.Put(context.Background(), parent, checkpoint.Checkpoint{V: 4, ID: id,
			ChannelValues: map[string]any{"a": fmt.Sprint("value ", i)}, ChannelVersions: map[string]string{"a": ver}},
			checkpoint.Metadata{"step": i}, map[string]string{"a": ver})
	}
	step := func(t *testing.T, s *redissaver.Saver, parent checkpoint.Config, id string, i int) checkpoint.Config {
		t.Helper()
		cfg, err := put(s, parent, id, i)
		must(t, err)
		return cfg
	}
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = checkpoint.NewID()
		}
		if !slices.IsSorted(out) {
			t.Fatalf("NewID out of order: %v", out)
		}
		return out
	}
	for _, b := range backends {
		t.Run(b.name+"/older after newer", func(t *testing.T) {
			_, rec, ctr, s := observedSaver(t, b.client)
			id := ids(3)
			root := step(t, s, checkpoint.Config{ThreadID: "t"}, id[0], 0)
			newer := step(t, s, root, id[2], 2)
			older := step(t, s, root, id[1], 1) // a second branch from the root, ending after the newer one
			requirePlainLatest(t, s, rec, ctr, newer)
			step(t, s, root, id[1], 3) // the older checkpoint put again
			requirePlainLatest(t, s, rec, ctr, newer)
			requirePlainLatest(t, s, rec, ctr, step(t, s, older, checkpoint.NewID(), 4)) // newer than every other
		})
		t.Run(b.name+"/concurrent", func(t *testing.T) {
			// Observed once the Puts are over (the recorder is not safe
			// for concurrent use).
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			id := ids(9)
			root := step(t, s, checkpoint.Config{ThreadID: "t"}, id[0], 0)
			var wg sync.WaitGroup
			for i := len(id) - 1; i >= 1; i-- { // newest first: the last to end is likely an older one
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := put(s, root, id[i], i); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			rec := &txRecorder{}
			rdb.AddHook(rec)
			ctr := redistest.CountRoundTrips(rdb)
			requirePlainLatest(t, s, rec, ctr, checkpoint.Config{ThreadID: "t", CheckpointID: id[len(id)-1]})
		})
	}
}

// TestDeletedPredictionIsNotContention: a prediction refuted because its
// checkpoint was deleted (DeleteForRuns of the saver or of another, which
// names no namespace it emptied in a thread that keeps others) costs one
// second round trip, and the namespace is not taken for another writer's:
// once the saver knows its latest again, reads of it are confirmed by
// plain reads (one round trip, no script).
func TestDeletedPredictionIsNotContention(t *testing.T) {
	put := func(t *testing.T, s *redissaver.Saver, ns, run string, parent string, i int) checkpoint.Config {
		t.Helper()
		ver := fmt.Sprint(i + 1)
		cfg, err := s.Put(context.Background(), checkpoint.Config{ThreadID: "t", CheckpointNS: ns, CheckpointID: parent},
			checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": run}, ChannelVersions: map[string]string{"a": ver}},
			checkpoint.Metadata{"run_id": run}, map[string]string{"a": ver})
		must(t, err)
		return cfg
	}
	readNS := func(t *testing.T, s *redissaver.Saver, ctr *redistest.Counter, ns string, want string, trips int64) {
		t.Helper()
		ctr.Reset()
		tup, err := s.GetTuple(context.Background(), checkpoint.Config{ThreadID: "t", CheckpointNS: ns})
		switch {
		case want == "" && !errors.Is(err, checkpoint.ErrNotFound):
			t.Fatalf("namespace %q: %+v, %v; want ErrNotFound", ns, tup, err)
		case want != "" && (err != nil || tup.Config.CheckpointID != want):
			t.Fatalf("namespace %q: %+v, %v; want %s", ns, tup, err, want)
		}
		if n := ctr.Load(); n != trips {
			t.Fatalf("namespace %q: %d round trips (%v), want %d", ns, n, ctr.Commands(), trips)
		}
	}
	requirePlain := func(t *testing.T, s *redissaver.Saver, rec *txRecorder, ctr *redistest.Counter, ns, want string) {
		t.Helper()
		rec.txs = nil
		readNS(t, s, ctr, ns, want, 1)
		if len(rec.txs) != 1 || slices.Contains(rec.txs[0], "evalsha") {
			t.Fatalf("namespace %q: transactions %v; want the plain reads", ns, rec.txs)
		}
	}
	for _, b := range backends {
		t.Run(b.name+"/namespace emptied by the saver", func(t *testing.T) {
			_, rec, ctr, s := observedSaver(t, b.client)
			put(t, s, "", "keep", "", 0)
			put(t, s, "sub", "drop", "", 0)
			must(t, s.DeleteForRuns(context.Background(), []string{"drop"}))
			readNS(t, s, ctr, "sub", "", 2) // the prediction refuted: the script says the namespace is empty
			again := put(t, s, "sub", "again", "", 1)
			requirePlain(t, s, rec, ctr, "sub", again.CheckpointID)
		})
		t.Run(b.name+"/latest deleted by another saver", func(t *testing.T) {
			rdb, rec, ctr, s := observedSaver(t, b.client)
			other, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: keys.Of(s).Prefix(), AcceptEviction: true})
			must(t, err)
			kept := put(t, s, "", "keep", "", 0)
			put(t, s, "", "drop", kept.CheckpointID, 1)
			must(t, other.DeleteForRuns(context.Background(), []string{"drop"}))
			readNS(t, s, ctr, "", kept.CheckpointID, 2) // refuted: the script answers
			readNS(t, s, ctr, "", kept.CheckpointID, 1) // nothing predicted: the script alone
			requirePlain(t, s, rec, ctr, "", kept.CheckpointID)
		})
	}
}

// observedSaver returns a client of a backend with a transaction recorder
// and a round-trip counter, and a saver on it with its scripts loaded (no
// NOSCRIPT retry in the counts).
func observedSaver(t *testing.T, client func(*testing.T) redis.UniversalClient) (redis.UniversalClient, *txRecorder, *redistest.Counter, *redissaver.Saver) {
	t.Helper()
	rdb := client(t)
	rec := &txRecorder{}
	rdb.AddHook(rec)
	ctr := redistest.CountRoundTrips(rdb)
	s := newSaver(t, rdb, redissaver.Options{})
	must(t, s.LoadScripts(context.Background()))
	return rdb, rec, ctr, s
}

// requireUnpredictedMiss reads the latest checkpoint of namespace ns of
// thread "t", which is gone, and requires ErrNotFound from the script alone:
// one round trip, no transaction (nothing predicted).
func requireUnpredictedMiss(t *testing.T, s *redissaver.Saver, rec *txRecorder, ctr *redistest.Counter, ns string) {
	t.Helper()
	rec.txs = nil
	ctr.Reset()
	if _, err := s.GetTuple(context.Background(), checkpoint.Config{ThreadID: "t", CheckpointNS: ns}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("namespace %q of a deleted thread: %v, want ErrNotFound", ns, err)
	}
	if n := ctr.Load(); n != 1 || len(rec.txs) != 0 {
		t.Fatalf("namespace %q of a deleted thread: %d round trips, transactions %v; want the script alone", ns, n, rec.txs)
	}
}

// requirePlainLatest reads the latest checkpoint of thread "t" and requires
// want, confirmed by plain reads: one round trip, one transaction, no script.
func requirePlainLatest(t *testing.T, s *redissaver.Saver, rec *txRecorder, ctr *redistest.Counter, want checkpoint.Config) {
	t.Helper()
	rec.txs = nil
	ctr.Reset()
	tup, err := s.GetTuple(context.Background(), checkpoint.Config{ThreadID: "t"})
	if err != nil || tup.Config.CheckpointID != want.CheckpointID {
		t.Fatalf("latest of the thread written again: %+v, %v; want %s", tup, err, want.CheckpointID)
	}
	if n := ctr.Load(); n != 1 || len(rec.txs) != 1 || slices.Contains(rec.txs[0], "evalsha") {
		t.Fatalf("latest of the thread written again: %d round trips, transactions %v; want the plain reads", n, rec.txs)
	}
}
