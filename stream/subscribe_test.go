package stream_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

func newSubscriber(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver) *stream.Subscriber {
	t.Helper()
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: keys.Of(s).Shards(), Block: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// nowFound counts the subscriptions through rdb that have found "now" (the
// pipeline of XREVRANGEs that reads the end of their streams has returned)
// and returns a wait for n of them: a test that publishes after it knows
// those events come after every such position, where a sleep only hopes so.
func nowFound(t *testing.T, rdb redis.UniversalClient) (wait func(n int)) {
	var found atomic.Int64
	rdb.AddHook(endsRead{&found})
	return func(n int) {
		t.Helper()
		waitFor(t, fmt.Sprintf("%d subscriptions to find \"now\"", n), func() bool { return found.Load() >= int64(n) })
	}
}

// endsRead is nowFound's hook: it counts the pipelines of XREVRANGEs that
// returned without error.
type endsRead struct{ n *atomic.Int64 }

func (endsRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (endsRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h endsRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err == nil && len(cmds) > 0 && cmds[0].Name() == "xrevrange" {
			h.n.Add(1)
		}
		return err
	}
}

// putN writes n chained checkpoints on a thread and returns their ids.
func putN(t *testing.T, s *redissaver.Saver, thread string, n int) []string {
	t.Helper()
	return putNFrom(t, s, thread, "", n)
}

// putNFrom writes n chained checkpoints on a thread, the first a child of
// parent ("" for a root), and returns their ids.
func putNFrom(t *testing.T, s *redissaver.Saver, thread, parent string, n int) []string {
	t.Helper()
	cfg := checkpoint.Config{ThreadID: thread, CheckpointID: parent}
	var ids []string
	for i := range n {
		var err error
		if cfg, err = s.Put(context.Background(), cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, checkpoint.Metadata{"step": i}, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cfg.CheckpointID)
	}
	return ids
}

// collect ranges over a subscription in the background until it has n
// events or the deadline passes.
func collect(t *testing.T, sub *stream.Subscriber, q stream.Query, n int) (<-chan []stream.Event, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	out := make(chan []stream.Event, 1)
	go func() {
		var got []stream.Event
		for ev, err := range sub.Subscribe(ctx, q) {
			if err != nil {
				continue
			}
			got = append(got, ev)
			if len(got) == n {
				break
			}
		}
		out <- got
	}()
	return out, cancel
}

func checkpointIDs(evs []stream.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.CheckpointID)
	}
	return out
}

func TestSubscribeLive(t *testing.T) { forTiers(t, subscribeLive) }

func subscribeLive(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{})
	sub := newSubscriber(t, rdb, s)
	found := nowFound(t, rdb)
	putN(t, s, "before", 2) // before the subscriptions: not seen from "now"
	one, cancel1 := collect(t, sub, stream.Query{ThreadID: "live"}, 5)
	defer cancel1()
	all, cancel2 := collect(t, sub, stream.Query{}, 8)
	defer cancel2()
	found(2)
	ids := putN(t, s, "live", 5)
	others := putN(t, s, "other", 3)
	if got := checkpointIDs(<-one); fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Errorf("thread subscription got %v, want %v", got, ids)
	}
	got := <-all
	if len(got) != 8 {
		t.Fatalf("all-threads subscription got %d events, want 8", len(got))
	}
	var live, other []string
	for _, ev := range got {
		if ev.ThreadID == "live" {
			live = append(live, ev.CheckpointID)
		} else {
			other = append(other, ev.CheckpointID)
		}
	}
	if fmt.Sprint(live) != fmt.Sprint(ids) || fmt.Sprint(other) != fmt.Sprint(others) {
		t.Errorf("all threads: per-thread order broken: %v / %v", live, other)
	}
}

// TestResumeExactlyOnce: a subscriber stopped mid-stream and restarted from
// the cursor of the last event it got receives every later event exactly
// once, in order — for one thread and for every thread.
func TestResumeExactlyOnce(t *testing.T) { forTiers(t, resumeExactlyOnceBody) }

func resumeExactlyOnceBody(t *testing.T, rdb redis.UniversalClient) {
	for _, thread := range []string{"resume", ""} {
		t.Run("thread="+thread, func(t *testing.T) {
			s := newSaver(t, rdb, redissaver.Options{})
			sub := newSubscriber(t, rdb, s)
			ids := putN(t, s, "resume", 20)
			var got []string
			cursor := stream.FromBeginning
			for len(got) < 20 {
				// Take a few events, then drop the subscription.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				n := 0
				for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: thread, From: cursor}) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ev.CheckpointID)
					cursor = ev.Cursor
					if n++; n == 7 || len(got) == 20 {
						break
					}
				}
				cancel()
			}
			if fmt.Sprint(got) != fmt.Sprint(ids) {
				t.Errorf("resumed subscriptions got %v, want %v", got, ids)
			}
		})
	}
}

func TestSubscribeSince(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{})
	sub := newSubscriber(t, rdb, s)
	putN(t, s, "since", 3)
	time.Sleep(5 * time.Millisecond)
	since := time.Now()
	time.Sleep(5 * time.Millisecond)
	later := putN(t, s, "since", 2)
	got, cancel := collect(t, sub, stream.Query{ThreadID: "since", Since: since}, 2)
	defer cancel()
	if ids := checkpointIDs(<-got); fmt.Sprint(ids) != fmt.Sprint(later) {
		t.Errorf("since: got %v, want %v", ids, later)
	}
}

func TestSubscribeNamespaceFilter(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{})
	sub := newSubscriber(t, rdb, s)
	ctx := context.Background()
	for _, ns := range []string{"", "child:1", "", "child:1"} {
		if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "ns", CheckpointNS: ns}, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	child := "child:1"
	got, cancel := collect(t, sub, stream.Query{ThreadID: "ns", CheckpointNS: &child, From: stream.FromBeginning}, 2)
	defer cancel()
	for _, ev := range <-got {
		if ev.CheckpointNS != child {
			t.Errorf("namespace filter let %q through", ev.CheckpointNS)
		}
	}
}

// TestReconnect: the subscription survives an outage (every connection
// cut, new ones refused for a while, as in a Redis restart) and resumes
// after the last event it yielded: none lost, none repeated.
func TestReconnect(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			direct := tr.client(t)
			proxy := redistest.NewProxy(t, direct.Options().Addr)
			viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), Username: direct.Options().Username,
				Password: direct.Options().Password, DB: direct.Options().DB})
			t.Cleanup(func() { viaProxy.Close() })
			s := newSaver(t, direct, redissaver.Options{})
			sub := newSubscriber(t, viaProxy, s)
			want := putN(t, s, "restart", 3)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var got []string
			errs := 0
			for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: "restart", From: stream.FromBeginning}) {
				if err != nil {
					errs++
					continue
				}
				got = append(got, ev.CheckpointID)
				if len(got) == 3 {
					proxy.Cut()
					// Written during the outage: must arrive after it.
					want = append(want, putN(t, s, "restart", 2)...)
					// Longer than go-redis's own retries: the subscription's
					// reconnect loop must carry it.
					time.AfterFunc(2*time.Second, proxy.Restore)
				}
				if len(got) == 5 {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("across the outage got %v, want %v", got, want)
			}
			if errs == 0 {
				t.Error("the outage yielded no error")
			}
		})
	}
}

// TestSubscribeEndsWithContext: cancelling the context ends the iteration
// even when no event arrives.
func TestSubscribeEndsWithContext(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{Shards: 3})
	sub := newSubscriber(t, rdb, s)
	for _, thread := range []string{"quiet", ""} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range sub.Subscribe(ctx, stream.Query{ThreadID: thread}) {
			}
		}()
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Fatalf("thread %q: Subscribe did not return after its context ended", thread)
		}
	}
}

// TestPosition: a position taken before writes, used as From, yields
// exactly the writes after it.
func TestPosition(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{Shards: 2})
	sub := newSubscriber(t, rdb, s)
	putN(t, s, "pos", 2)
	for _, thread := range []string{"pos", ""} {
		cursor, err := sub.Position(context.Background(), thread)
		if err != nil {
			t.Fatal(err)
		}
		ids := putN(t, s, "pos", 3)
		got, cancel := collect(t, sub, stream.Query{ThreadID: thread, From: cursor}, 3)
		if fmt.Sprint(checkpointIDs(<-got)) != fmt.Sprint(ids) {
			t.Errorf("thread %q: from the position got something else than %v", thread, ids)
		}
		cancel()
	}
}

// TestSurvivesRedisRestart: a subscription to every thread survives a real
// redis-server crash (SIGKILL) and restart with its append-only file: the
// events written before the crash, those it had not yet read and those
// written after the restart all arrive exactly once, in order per thread.
func TestSurvivesRedisRestart(t *testing.T) {
	srv := redistest.StartRestartableServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{Shards: 4})
	sub := newSubscriber(t, rdb, s)
	want := putN(t, s, "crash", 5)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []string
	errs := 0
	for ev, err := range sub.Subscribe(ctx, stream.Query{From: stream.FromBeginning}) {
		if err != nil {
			errs++
			continue
		}
		got = append(got, ev.CheckpointID)
		if len(got) == 3 {
			srv.Kill()
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			// Written after the restart, once Redis answers again.
			deadline := time.Now().Add(10 * time.Second)
			for rdb.Ping(context.Background()).Err() != nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			want = append(want, putN(t, s, "crash", 3)...)
		}
		if len(got) == len(want) && len(want) == 8 {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("across a crash and restart got %v, want %v", got, want)
	}
	t.Logf("%d errors yielded while Redis was down", errs)
}

// TestSubscribeInvalidQuery: a From that is no cursor of the query's
// streams (not a cursor, another shard count, a malformed mark) is refused
// by CheckQuery, and Subscribe yields that error once and ends instead of
// retrying it; the cursors redcheck gives (an event's, Position's, without
// marks as before) pass.
func TestSubscribeInvalidQuery(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{Shards: 2})
	sub := newSubscriber(t, rdb, s)
	ctx := context.Background()
	putN(t, s, "q", 1)
	own, err := sub.Position(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	all, err := sub.Position(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []stream.Query{
		{ThreadID: "q"}, {ThreadID: "q", From: stream.FromBeginning}, {ThreadID: "q", From: own},
		{From: all}, {ThreadID: "q", From: "5-1"}, {From: "5-1,0-0"},
	} {
		if err := sub.CheckQuery(q); err != nil {
			t.Errorf("CheckQuery(%+v): %v", q, err)
		}
	}
	for _, q := range []stream.Query{
		{ThreadID: "q", From: "garbage"}, {ThreadID: "q", From: all}, {From: own},
		{ThreadID: "q", From: "5-1~zz"}, {From: "5-1"},
	} {
		if err := sub.CheckQuery(q); !errors.Is(err, stream.ErrInvalidQuery) {
			t.Errorf("CheckQuery(%+v): %v, want ErrInvalidQuery", q, err)
		}
		subscribeOnce(t, sub, q, stream.ErrInvalidQuery)
	}
	bad := stream.Query{ThreadID: strings.Repeat("x", 5000)} // over keys' limit
	if err := sub.CheckQuery(bad); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("CheckQuery of a thread ID of 5,000 bytes: %v, want ErrInvalidConfig", err)
	}
	subscribeOnce(t, sub, bad, checkpoint.ErrInvalidConfig)
}

// subscribeOnce checks that Subscribe yields one error matching want and
// ends, within 2 s.
func subscribeOnce(t *testing.T, sub *stream.Subscriber, q stream.Query, want error) {
	t.Helper()
	ctx := context.Background()
	{
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var errs []error
		for ev, err := range sub.Subscribe(ctx, q) {
			if err == nil {
				t.Errorf("%+v: event %+v", q, ev)
			}
			errs = append(errs, err)
		}
		timedOut := ctx.Err()
		cancel()
		if len(errs) != 1 || !errors.Is(errs[0], want) || timedOut != nil {
			t.Errorf("Subscribe(%+v) yielded %v (context %v), want one %v and the end", q, errs, timedOut, want)
		}
	}
}
