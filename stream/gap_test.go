package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// gapLog is what a subscription yielded: events (by checkpoint ID), gaps,
// other errors, in order.
type gapLog struct {
	mu      sync.Mutex
	seq     []string // "gap" or a checkpoint ID
	gaps    []*stream.GapError
	errs    []error
	cursors []string // each seq item's Cursor
	// unknownAt: for each ErrTrimUnknown (in errs too), the length of seq
	// when it came.
	unknownAt []int
}

func (l *gapLog) add(ev stream.Event, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var g *stream.GapError
	switch {
	case errors.As(err, &g):
		if !errors.Is(err, stream.ErrGap) || ev.Type != stream.TypeGap || ev.Gap != g {
			l.errs = append(l.errs, fmt.Errorf("gap yielded as %v with %+v", err, ev))
		}
		l.seq = append(l.seq, "gap")
		l.gaps = append(l.gaps, g)
		l.cursors = append(l.cursors, ev.Cursor)
	case err != nil:
		l.errs = append(l.errs, err)
		if errors.Is(err, stream.ErrTrimUnknown) {
			l.unknownAt = append(l.unknownAt, len(l.seq))
		}
	default:
		l.seq = append(l.seq, ev.CheckpointID)
		l.cursors = append(l.cursors, ev.Cursor)
	}
}

func (l *gapLog) snapshot() (seq []string, gaps []*stream.GapError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seq), slices.Clone(l.gaps)
}

// waitLen waits until the subscription yielded at least n events and
// gaps.
func (l *gapLog) waitLen(t *testing.T, what string, n int) {
	t.Helper()
	waitFor(t, what, func() bool { seq, _ := l.snapshot(); return len(seq) >= n })
}

// settle lets quiet pass (nothing more may come), ends the subscription
// and returns what it yielded.
func (l *gapLog) settle(quiet time.Duration, cancel context.CancelFunc, done <-chan struct{}) (seq []string, gaps []*stream.GapError) {
	time.Sleep(quiet)
	cancel()
	<-done
	return l.snapshot()
}

// follow ranges over a subscription in the background until ctx ends.
func follow(sub *stream.Subscriber, q stream.Query) (*gapLog, context.CancelFunc, <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	l := &gapLog{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range sub.Subscribe(ctx, q) {
			l.add(ev, err)
		}
	}()
	return l, cancel, done
}

// trim trims streams to exactly n entries.
func trim(t *testing.T, rdb redis.UniversalClient, n int64, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := rdb.XTrimMaxLen(context.Background(), k, n).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func feeds(s *redissaver.Saver) []string {
	var out []string
	for n := range keys.Of(s).Shards() {
		out = append(out, keys.Of(s).Feed(n))
	}
	return out
}

// TestSubscribeFromTrimmedCursor: a subscription resumed from a cursor that
// Redis trimmed away yields one gap first (from the cursor to the first
// entry left), then every later event exactly once — for one thread and
// for every thread.
func TestSubscribeFromTrimmedCursor(t *testing.T) { forTiers(t, subscribeFromTrimmedCursor) }

func subscribeFromTrimmedCursor(t *testing.T, rdb redis.UniversalClient) {
	for _, thread := range []string{"trimmed", ""} {
		t.Run("thread="+thread, func(t *testing.T) {
			s := newSaver(t, rdb, redissaver.Options{Shards: 2})
			sub := newSubscriber(t, rdb, s)
			putN(t, s, "trimmed", 3)
			cursor, err := sub.Position(context.Background(), thread)
			if err != nil {
				t.Fatal(err)
			}
			ids := putN(t, s, "trimmed", 10)
			keys := []string{keys.Of(s).Events("trimmed")}
			if thread == "" {
				keys = feeds(s)
			}
			trim(t, rdb, 4, keys...)          // the cursor and 6 events after it are gone
			first := firstEntry(t, rdb, keys) // of the thread's shard
			log, cancel, done := follow(sub, stream.Query{ThreadID: thread, From: cursor})
			defer func() { cancel(); <-done }()
			log.waitLen(t, "the 4 events left", 5)
			later := putN(t, s, "trimmed", 3)
			log.waitLen(t, "the later events", 8)
			seq, gaps := log.settle(200*time.Millisecond, cancel, done)
			want := append(append([]string{"gap"}, ids[6:]...), later...)
			if fmt.Sprint(seq) != fmt.Sprint(want) {
				t.Errorf("got %v, want %v", seq, want)
			}
			if len(gaps) != 1 {
				t.Fatalf("%d gaps, want 1", len(gaps))
			}
			g := gaps[0]
			if g.Reason != stream.GapTrimmed || !strings.Contains(cursor, g.From) || g.To != first {
				t.Errorf("gap %+v, want from a position of %s to %s", g, cursor, first)
			}
			if len(log.errs) > 0 {
				t.Errorf("errors: %v", log.errs)
			}
		})
	}
}

// TestSubscribeNoGapWhenNothingLost: resuming from a cursor Redis still
// holds, from the beginning and from a time the stream holds an entry before
// yields no gap, though the streams were trimmed (TestSubscribeSinceTrimmed
// has the times a trim concerns).
func TestSubscribeNoGapWhenNothingLost(t *testing.T) {
	_, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	sub := newSubscriber(t, rdb, s)
	putN(t, s, "kept", 6)
	trim(t, rdb, 4, keys.Of(s).Events("kept"))
	kept := rdb.XRange(context.Background(), keys.Of(s).Events("kept"), "-", "+").Val()
	for name, q := range map[string]stream.Query{
		"cursor held": {ThreadID: "kept", From: kept[0].ID},
		"beginning":   {ThreadID: "kept", From: stream.FromBeginning},
		"since a time the stream holds an entry before": {ThreadID: "kept", Since: time.UnixMilli(mustAtoi(t, strings.Split(kept[0].ID, "-")[0]) + 1)},
		"empty thread": {ThreadID: "never", From: "0-0"},
	} {
		log, cancel, done := follow(sub, q)
		time.Sleep(300 * time.Millisecond)
		cancel()
		<-done
		if _, gaps := log.snapshot(); len(gaps) != 0 || len(log.errs) != 0 {
			t.Errorf("%s: gaps %v, errors %v", name, gaps, log.errs)
		}
	}
}

// loss is a way to lose every key of a test's Redis: a restart without
// persistence, a FLUSHALL.
type loss struct {
	name   string
	client func(t *testing.T) (rdb redis.UniversalClient, lose func())
}

var losses = []loss{
	{"miniredis-flush", func(t *testing.T) (redis.UniversalClient, func()) {
		mr, rdb := redistest.Mini(t)
		return rdb, mr.FlushAll
	}},
	{"redis-restart-without-persistence", func(t *testing.T) (redis.UniversalClient, func()) {
		srv := redistest.StartRestartableServer(t, "--appendonly", "no")
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		return rdb, func() {
			srv.Kill()
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "Redis back", func() bool { return rdb.Ping(context.Background()).Err() == nil })
		}
	}},
}

// TestDataLoss: after Redis lost everything (a restart without
// persistence, a FLUSHALL), a subscription reports one gap and receives the
// new events; a consumer re-creates its group, reports one gap and handles
// every new event.
func TestDataLoss(t *testing.T) {
	for _, l := range losses {
		t.Run(l.name, func(t *testing.T) {
			t.Run("subscribe", func(t *testing.T) { rdb, lose := l.client(t); subscribeAfterLoss(t, rdb, lose) })
			t.Run("consume", func(t *testing.T) { rdb, lose := l.client(t); consumeAfterLoss(t, rdb, lose) })
		})
	}
}

func subscribeAfterLoss(t *testing.T, rdb redis.UniversalClient, lose func()) {
	for _, thread := range []string{"lost", ""} {
		s := newSaver(t, rdb, redissaver.Options{Shards: 1})
		sub := newSubscriber(t, rdb, s)
		before := putN(t, s, "lost", 2)
		log, cancel, done := follow(sub, stream.Query{ThreadID: thread, From: stream.FromBeginning})
		log.waitLen(t, "the events before the loss", len(before))
		lose()
		time.Sleep(200 * time.Millisecond) // let the subscription notice
		s = reopen(t, rdb, s)
		after := putN(t, s, "lost", 3)
		log.waitLen(t, "the events after the loss", 6)
		time.Sleep(200 * time.Millisecond)
		cancel()
		<-done
		seq, gaps := log.snapshot()
		want := append(append(slices.Clone(before), "gap"), after...)
		if fmt.Sprint(seq) != fmt.Sprint(want) {
			t.Errorf("thread %q: got %v, want %v", thread, seq, want)
		}
		if len(gaps) == 1 && gaps[0].From == "" {
			t.Errorf("gap %+v without the position it follows", gaps[0])
		}
	}
}

func consumeAfterLoss(t *testing.T, rdb redis.UniversalClient, lose func()) {
	for _, thread := range []string{"lost", ""} {
		s := newSaver(t, rdb, redissaver.Options{Shards: 1})
		sub := newSubscriber(t, rdb, s)
		h, reports, stop := consumeInto(sub, stream.ConsumeOptions{ThreadID: thread, Start: stream.FromBeginning, MinIdle: 100 * time.Millisecond})
		putN(t, s, "lost", 2)
		waitFor(t, "the events before the loss", func() bool { return h.count() == 2 })
		lose()
		t0 := time.Now()
		s = reopen(t, rdb, s)
		after := putN(t, s, "lost", 3)
		waitFor(t, "the events after the loss", func() bool { return h.count() == 5 })
		t.Logf("thread %q: recovered in %v", thread, time.Since(t0).Round(time.Millisecond))
		time.Sleep(300 * time.Millisecond) // past MinIdle: no second gap, no redelivery
		stop()
		for _, id := range after {
			if h.ids[id] != 1 {
				t.Errorf("thread %q: %s handled %d times", thread, id, h.ids[id])
			}
		}
		reports.wantOneGroupLost(t, keys.Of(s).Events("lost"), thread != "")
	}
}

// TestConsumeStreamRewrittenAtLastID: a stream lost and written again with
// another event at exactly the ID its consumer last read, and one before
// it (a clock that went back), is not taken for the stream the consumer
// knew: the group is created again from the start, so both new events are
// handled, and one lost group is reported.
func TestConsumeStreamRewrittenAtLastID(t *testing.T) { forTiers(t, consumeStreamRewrittenAtLastID) }

func consumeStreamRewrittenAtLastID(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	sub := newSubscriber(t, rdb, s)
	key := keys.Of(s).Events("rewritten")
	h, reports, stop := consumeInto(sub, stream.ConsumeOptions{ThreadID: "rewritten", Start: stream.FromBeginning, MinIdle: time.Hour})
	defer stop()
	putN(t, s, "rewritten", 2)
	waitFor(t, "the events before the loss", func() bool { return h.count() == 2 })
	old := rdb.XRange(ctx, key, "-", "+").Val()
	last := old[len(old)-1]
	ms, _, _ := strings.Cut(last.ID, "-")
	copyAs := func(p redis.Pipeliner, id, cp string) {
		values := maps.Clone(last.Values)
		values["id"] = cp
		p.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: id, Values: values})
	}
	// Lost and written again at once, so that the consumer finds it written.
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		copyAs(p, fmt.Sprintf("%d-0", mustAtoi(t, ms)-1), "new-before")
		copyAs(p, last.ID, "new-at")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new stream's events", func() bool { return h.count() == 4 })
	time.Sleep(200 * time.Millisecond) // nothing more may come
	for _, id := range []string{"new-before", "new-at"} {
		if h.ids[id] != 1 {
			t.Errorf("%s handled %d times", id, h.ids[id])
		}
	}
	reports.wantOneGroupLost(t, key, true)
}

// consumeInto runs consumer "c1" of group "workers" in the background,
// recording the checkpoints it handles and what it reports; stop ends it
// and waits for it.
func consumeInto(sub *stream.Subscriber, opts stream.ConsumeOptions) (h *handled, reports *consumeReports, stop func()) {
	h, reports = &handled{}, &consumeReports{}
	opts.OnError = reports.onError
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sub.Consume(ctx, "workers", "c1", func(_ context.Context, ev stream.Event) error {
			h.add(ev.CheckpointID)
			return nil
		}, opts)
	}()
	return h, reports, func() { cancel(); <-done }
}

// consumeReports collects what Consume reported through OnError.
type consumeReports struct {
	mu   sync.Mutex
	gaps []*stream.GapError
	errs int
}

func (r *consumeReports) onError(ev stream.Event, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var g *stream.GapError
	if errors.As(err, &g) && ev.Type == stream.TypeGap && ev.Gap == g {
		r.gaps = append(r.gaps, g)
	} else {
		r.errs++
	}
}

// wantOneGroupLost checks that exactly one gap was reported, a lost group
// (on key when checkKey), and few errors while Consume recovered.
func (r *consumeReports) wantOneGroupLost(t *testing.T, key string, checkKey bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.gaps) != 1 || r.gaps[0].Reason != stream.GapGroupLost || (checkKey && r.gaps[0].Stream != key) {
		t.Errorf("gaps %v, want one group_lost on %s", r.gaps, key)
	}
	if r.errs > 10 {
		t.Errorf("%d errors reported while recovering", r.errs)
	}
}

// TestGroupDeletedWhileConsuming: a group destroyed, or its stream deleted,
// under a running Consume is re-created within a second or two, with one
// gap reported, and every later event handled once.
func TestGroupDeletedWhileConsuming(t *testing.T) { forTiers(t, groupDeletedWhileConsuming) }

func groupDeletedWhileConsuming(t *testing.T, rdb redis.UniversalClient) {
	for _, what := range []string{"stream", "group"} {
		t.Run(what, func(t *testing.T) {
			s := newSaver(t, rdb, redissaver.Options{Shards: 1})
			sub := newSubscriber(t, rdb, s)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var h handled
			var reports consumeReports
			go sub.Consume(ctx, "workers", "c1", func(_ context.Context, ev stream.Event) error {
				h.add(ev.CheckpointID)
				return nil
			}, stream.ConsumeOptions{ThreadID: "job", Start: stream.FromBeginning, MinIdle: 100 * time.Millisecond, OnError: reports.onError})
			putN(t, s, "job", 3)
			waitFor(t, "3 events", func() bool { return h.count() == 3 })
			key := keys.Of(s).Events("job")
			if what == "stream" {
				rdb.Del(context.Background(), key)
			} else {
				rdb.XGroupDestroy(context.Background(), key, "workers")
			}
			t0 := time.Now()
			later := putN(t, s, "job", 3)
			waitFor(t, "the 3 later events", func() bool { return h.count() == 6 })
			if d := time.Since(t0); d > 5*time.Second { // 1-2 s expected; generous under load
				t.Errorf("recovered in %v", d)
			}
			time.Sleep(300 * time.Millisecond)
			for _, id := range later {
				if h.ids[id] != 1 {
					t.Errorf("%s handled %d times", id, h.ids[id])
				}
			}
			reports.wantOneGroupLost(t, key, true)
		})
	}
}

// TestPendingTrimmed: pending entries trimmed away before they were handled
// are reported with their IDs, acknowledged, and the rest handled.
func TestPendingTrimmed(t *testing.T) { forTiers(t, pendingTrimmed) }

func pendingTrimmed(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	sub := newSubscriber(t, rdb, s)
	ids := putN(t, s, "pend", 10)
	key := keys.Of(s).Events("pend")
	entries := rdb.XRange(context.Background(), key, "-", "+").Val()

	// c1 takes all 10 and fails them: they stay pending.
	ctx1, stop1 := context.WithCancel(context.Background())
	var failed handled
	done1 := make(chan struct{})
	go func() {
		defer close(done1)
		sub.Consume(ctx1, "g", "c1", func(_ context.Context, ev stream.Event) error {
			failed.add(ev.CheckpointID)
			return errors.New("not now")
		}, stream.ConsumeOptions{ThreadID: "pend", Start: stream.FromBeginning, MinIdle: time.Hour})
	}()
	waitFor(t, "10 failed events", func() bool { return failed.count() == 10 })
	stop1()
	<-done1
	trim(t, rdb, 4, key) // 6 pending entries gone

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ok handled
	var mu sync.Mutex
	var lost []string
	go sub.Consume(ctx, "g", "c2", func(_ context.Context, ev stream.Event) error {
		ok.add(ev.CheckpointID)
		return nil
	}, stream.ConsumeOptions{ThreadID: "pend", MinIdle: 50 * time.Millisecond, OnError: func(ev stream.Event, err error) {
		var g *stream.GapError
		if errors.As(err, &g) && g.Reason == stream.GapPendingTrimmed && ev.Type == stream.TypeGap {
			mu.Lock()
			lost = append(lost, g.Lost...)
			mu.Unlock()
		}
	}})
	waitFor(t, "the 4 entries left handled", func() bool { return ok.count() == 4 })
	waitFor(t, "6 lost entries reported", func() bool { mu.Lock(); defer mu.Unlock(); return len(lost) >= 6 })
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for _, e := range entries[:6] {
		want = append(want, e.ID)
	}
	slices.Sort(lost)
	if fmt.Sprint(lost) != fmt.Sprint(want) {
		t.Errorf("lost %v, want %v", lost, want)
	}
	for _, id := range ids[6:] {
		if ok.ids[id] != 1 {
			t.Errorf("%s handled %d times", id, ok.ids[id])
		}
	}
	if p := rdb.XPending(context.Background(), key, "g").Val(); p.Count != 0 {
		t.Errorf("%d entries still pending", p.Count)
	}
}

func TestGapError(t *testing.T) {
	g := &stream.GapError{Stream: "s", Reason: stream.GapPendingTrimmed, From: "1-0", To: "5-0", Lost: []string{"2-0", "3-0"}}
	var err error = fmt.Errorf("wrapped: %w", g)
	if !errors.Is(err, stream.ErrGap) {
		t.Error("not ErrGap")
	}
	if want := "stream: gap in the events: s: pending_trimmed after 1-0, resuming at 5-0, 2 lost: 2-0 3-0"; g.Error() != want {
		t.Errorf("Error() = %q", g.Error())
	}
	data, _ := json.Marshal(stream.Event{Type: stream.TypeGap, Cursor: "5-0", Gap: g}.JSON(nil))
	for _, want := range []string{`"type":"gap"`, `"gap":{"stream":"s","reason":"pending_trimmed","from":"1-0","to":"5-0","lost":["2-0","3-0"]}`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON %s lacks %s", data, want)
		}
	}
}

// reopen is what a writer does once Redis lost everything: its Puts fail
// with checkpoint.ErrDataLoss (the shard registries lost their markers);
// a new Saver on the prefix creates it again.
func reopen(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver) *redissaver.Saver {
	t.Helper()
	if _, err := s.Put(context.Background(), checkpoint.Config{ThreadID: "lost"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil); !errors.Is(err, checkpoint.ErrDataLoss) {
		t.Fatalf("Put after the loss: %v, want ErrDataLoss", err)
	}
	o := redissaver.Options{Prefix: keys.Of(s).Prefix(), Shards: keys.Of(s).Shards(), AcceptEviction: true}
	again, err := redissaver.New(context.Background(), rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	return again
}

// TestSubscribeStreamRewritten: a stream lost and written again with an
// entry before the subscription's position, or another event at exactly
// its ID (a clock that went back, or a loss and a write within one
// millisecond), yields one gap, then the new incarnation from its start,
// the entry before or at the position included: reading on from the
// position would skip it. The entry at the position is told from the one
// the subscription read by the mark its cursor carries. Both when the
// subscription resumes from a cursor after the rewrite and when it is
// blocked reading while it happens; for one thread and for every thread.
func TestSubscribeStreamRewritten(t *testing.T) { forTiers(t, subscribeStreamRewritten) }

func subscribeStreamRewritten(t *testing.T, rdb redis.UniversalClient) {
	for _, thread := range []string{"rewritten", ""} {
		for _, when := range []string{"before resuming", "while reading"} {
			for _, at := range []string{"before", "at"} {
				t.Run(fmt.Sprintf("thread=%s/%s/%s", thread, when, at), func(t *testing.T) {
					rewriteOnce(t, rdb, thread, when, at == "at")
				})
			}
		}
	}
}

func rewriteOnce(t *testing.T, rdb redis.UniversalClient, thread, when string, atPos bool) {
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	sub := newSubscriber(t, rdb, s)
	key := keys.Of(s).Events("rewritten")
	if thread == "" {
		key = keys.Of(s).Feed(0)
	}
	before := putN(t, s, "rewritten", 3)
	old := rdb.XRange(ctx, key, "-", "+").Val()
	pos := old[len(old)-1].ID
	cursor, err := sub.Position(ctx, thread) // pos, and the mark of its entry
	if err != nil {
		t.Fatal(err)
	}
	// The rewrite: the stream is lost, then holds a copy of
	// its first event under an ID before pos (or at pos),
	// then a new event.
	rewrite := func() []string {
		ms, _, _ := strings.Cut(pos, "-")
		if err := rdb.Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
		back := fmt.Sprintf("%d-0", mustAtoi(t, ms)-1)
		if atPos {
			back = pos
		}
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: back, Values: old[0].Values}).Err(); err != nil {
			t.Fatal(err)
		}
		// The new event after pos's millisecond.
		for time.Now().UnixMilli() <= mustAtoi(t, ms) {
			time.Sleep(time.Millisecond)
		}
		return append([]string{before[0]}, putN(t, s, "rewritten", 1)...)
	}
	var want []string
	var log *gapLog
	var cancel context.CancelFunc
	var done <-chan struct{}
	if when == "before resuming" {
		after := rewrite()
		log, cancel, done = follow(sub, stream.Query{ThreadID: thread, From: cursor})
		want = append([]string{"gap"}, after...)
	} else {
		log, cancel, done = follow(sub, stream.Query{ThreadID: thread, From: stream.FromBeginning})
		log.waitLen(t, "the events before the rewrite", len(before))
		time.Sleep(50 * time.Millisecond) // the subscription waits in a blocking read
		after := rewrite()
		want = append(append(slices.Clone(before), "gap"), after...)
	}
	defer func() { cancel(); <-done }()
	log.waitLen(t, "the rewritten stream's events", len(want))
	seq, gaps := log.settle(200*time.Millisecond, cancel, done)
	if fmt.Sprint(seq) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", seq, want)
	}
	if len(gaps) == 1 && (gaps[0].Reason != stream.GapStreamLost || gaps[0].From != pos) {
		t.Errorf("gap %+v, want %s from %s", gaps[0], stream.GapStreamLost, pos)
	}
	if len(log.errs) > 0 {
		t.Errorf("errors: %v", log.errs)
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
