package stream_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// handled records what a handler saw, safely.
type handled struct {
	mu  sync.Mutex
	ids map[string]int // checkpoint id -> times handled successfully
}

func (h *handled) add(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[string]int{}
	}
	h.ids[id]++
	return len(h.ids)
}

func (h *handled) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ids)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConsumeAcks(t *testing.T) { forTiers(t, consumeAcks) }

func consumeAcks(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{Shards: 4})
	sub := newSubscriber(t, rdb, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var h handled
	done := make(chan error, 1)
	go func() {
		done <- sub.Consume(ctx, "g", "c1", func(_ context.Context, ev stream.Event) error {
			h.add(ev.CheckpointID)
			return nil
		}, stream.ConsumeOptions{Start: stream.FromBeginning, MinIdle: 100 * time.Millisecond})
	}()
	ids := append(putN(t, s, "a", 5), putN(t, s, "b", 5)...)
	waitFor(t, "10 events handled", func() bool { return h.count() == 10 })
	for _, id := range ids {
		if h.ids[id] != 1 {
			t.Errorf("checkpoint %s handled %d times", id, h.ids[id])
		}
	}
	time.Sleep(300 * time.Millisecond) // past MinIdle: nothing may come back
	for n := range 4 {
		if p := rdb.XPending(context.Background(), keys.Of(s).Feed(n), "g").Val(); p != nil && p.Count != 0 {
			t.Errorf("shard %d: %d events left pending", n, p.Count)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Consume returned %v", err)
	}
}

// TestConsumerDiesEventsRedelivered: a consumer that dies holding
// unacknowledged events loses none: another claims and handles them all.
func TestConsumerDiesEventsRedelivered(t *testing.T) { forTiers(t, consumerDiesEventsRedelivered) }

func consumerDiesEventsRedelivered(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{Shards: 2})
	sub := newSubscriber(t, rdb, s)
	ids := putN(t, s, "work", 6)

	// c1 takes events and hangs in its handler until it is killed.
	ctx1, kill := context.WithCancel(context.Background())
	var got1 handled
	go sub.Consume(ctx1, "g", "c1", func(ctx context.Context, ev stream.Event) error {
		got1.add(ev.CheckpointID)
		<-ctx.Done()
		return ctx.Err()
	}, stream.ConsumeOptions{Start: stream.FromBeginning, MinIdle: time.Hour})
	waitFor(t, "c1 to hold an event", func() bool { return got1.count() > 0 })
	kill()

	ctx2, stop := context.WithCancel(context.Background())
	defer stop()
	var got2 handled
	go sub.Consume(ctx2, "g", "c2", func(_ context.Context, ev stream.Event) error {
		got2.add(ev.CheckpointID)
		return nil
	}, stream.ConsumeOptions{MinIdle: 200 * time.Millisecond})
	waitFor(t, "c2 to handle every event", func() bool { return got2.count() == len(ids) })
	for _, id := range ids {
		if got2.ids[id] != 1 {
			t.Errorf("%s handled %d times by c2", id, got2.ids[id])
		}
	}
}

func TestConsumeDeadLetterAndPanics(t *testing.T) { forTiers(t, consumeDeadLetterAndPanics) }

func consumeDeadLetterAndPanics(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	sub := newSubscriber(t, rdb, s)
	ids := putN(t, s, "poison", 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var panics, failures int
	go sub.Consume(ctx, "g", "c", func(_ context.Context, ev stream.Event) error {
		if ev.CheckpointID == ids[0] {
			panic("poison")
		}
		return errors.New("always fails")
	}, stream.ConsumeOptions{Start: stream.FromBeginning, MinIdle: 20 * time.Millisecond, MaxDeliveries: 3,
		OnError: func(_ stream.Event, err error) {
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, stream.ErrHandlerPanic) {
				panics++
			} else {
				failures++
			}
		}})
	dead := sub.DeadLetter(keys.Of(s).Feed(0), "g")
	waitFor(t, "both events in the dead-letter stream", func() bool { return rdb.XLen(context.Background(), dead).Val() == 2 })
	msgs := rdb.XRange(context.Background(), dead, "-", "+").Val()
	for i, m := range msgs {
		ev, err := stream.DecodeEvent(m, nil)
		if err != nil || ev.CheckpointID != ids[i] || m.Values["dead_deliveries"] != "3" {
			t.Errorf("dead letter %d: %+v %v %v", i, ev, m.Values, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if panics != 3 || failures != 3 {
		t.Errorf("reported %d panics and %d failures, want 3 and 3", panics, failures)
	}
	if p := rdb.XPending(context.Background(), keys.Of(s).Feed(0), "g").Val(); p.Count != 0 {
		t.Errorf("%d events still pending", p.Count)
	}
}

// TestConsumeGroupBehindATrim: a group whose stream was trimmed past events
// it never delivered (its consumers were down while the stream went on)
// reports one gap (GapTrimmed, from the last event it delivered to the
// first the stream holds) when it reads again, then handles what is left;
// a group that had delivered everything the trim removed reports none.
func TestConsumeGroupBehindATrim(t *testing.T) { forTiers(t, consumeGroupBehindATrim) }

func consumeGroupBehindATrim(t *testing.T, rdb redis.UniversalClient) {
	for _, behind := range []bool{true, false} {
		t.Run(fmt.Sprintf("behind=%v", behind), func(t *testing.T) {
			ctx := context.Background()
			s := newSaver(t, rdb, redissaver.Options{Shards: 1})
			sub := newSubscriber(t, rdb, s)
			key := keys.Of(s).Events("lag")
			run := func(want int) (*handled, []*stream.GapError) {
				h, reports, stop := consumeInto(sub, stream.ConsumeOptions{ThreadID: "lag", Start: stream.FromBeginning, MinIdle: time.Hour})
				waitFor(t, fmt.Sprintf("%d events handled", want), func() bool { return h.count() == want })
				time.Sleep(100 * time.Millisecond) // nothing more may come
				stop()
				reports.mu.Lock()
				defer reports.mu.Unlock()
				if reports.errs != 0 {
					t.Errorf("%d errors reported", reports.errs)
				}
				return h, slices.Clone(reports.gaps)
			}
			first := putN(t, s, "lag", 2)
			if _, gaps := run(2); len(gaps) != 0 {
				t.Fatalf("gaps %v before any trim", gaps)
			}
			// A blocking read the consumer sent before it stopped may still wait on the server for up to
			// the subscriber's Block (50 ms) after Consume returned (miniredis keeps it until then), and
			// would take the next event for the group: let it end before writing.
			time.Sleep(150 * time.Millisecond)
			delivered := rdb.XRange(ctx, key, "-", "+").Val()[1].ID
			more := putNFrom(t, s, "lag", first[1], 5) // written while no consumer runs
			if g := rdb.XInfoGroups(ctx, key).Val(); len(g) != 1 || g[0].LastDeliveredID != delivered {
				t.Fatalf("groups %+v after the first consumer stopped, want one that delivered up to %s", g, delivered)
			}
			keep, want := int64(2), 2 // the trim removes 3 events never delivered
			if !behind {
				keep, want = 6, 5 // it removes only an event the group delivered
			}
			if err := rdb.XTrimMaxLen(ctx, key, keep).Err(); err != nil {
				t.Fatal(err)
			}
			h, gaps := run(want)
			left := rdb.XRange(ctx, key, "-", "+").Val()
			for _, id := range more[5-want:] {
				if h.ids[id] != 1 {
					t.Errorf("%s handled %d times", id, h.ids[id])
				}
			}
			switch {
			case !behind && len(gaps) != 0:
				t.Errorf("gaps %+v, want none", gaps)
			case behind && (len(gaps) != 1 || gaps[0].Reason != stream.GapTrimmed || gaps[0].From != delivered || gaps[0].To != left[0].ID):
				t.Errorf("gaps %+v, want one %s from %s to %s", gaps, stream.GapTrimmed, delivered, left[0].ID)
			}
		})
	}
}

// TestConsumeTrimBeforeBlockingRead: while the handler is busy, events are
// written and the oldest of them trimmed before the consumer's next
// blocking read, which then starts at the first event left. The check
// after that read reports the trim ahead of the events it returned,
// though the group's last delivered entry is by then past the stream's
// first.
func TestConsumeTrimBeforeBlockingRead(t *testing.T) { forTiers(t, consumeTrimBeforeBlockingRead) }

func consumeTrimBeforeBlockingRead(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	key := keys.Of(s).Events("busy")
	blocking := redis.NewClient(rdb.(*redis.Client).Options())
	t.Cleanup(func() { _ = blocking.Close() })
	// past: the greatest entry a checked read found the group past, before
	// its own read (XINFO GROUPS) or with it (what its XREADGROUP returned).
	var mu sync.Mutex
	past := ""
	blocking.AddHook(afterCheckedRead(func(last string, read []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range append(read, last) {
			if id != "" && (past == "" || cmpID(id, past) > 0) {
				past = id
			}
		}
	}))
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: 1, Block: 50 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, BlockingClient: blocking})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	log, cancel, done := consumeLogged(sub, "busy", func(n int) {
		if n == 1 {
			<-release // the handler of the first event is busy
		}
	}, func(err error) { t.Errorf("reported: %v", err) })
	defer func() { cancel(); <-done }()
	free := sync.OnceFunc(func() { close(release) })
	defer free() // first: a test that fails does not leave the handler waiting
	waitFor(t, "the group", func() bool { return len(rdb.XInfoGroups(ctx, key).Val()) == 1 })
	e := putN(t, s, "busy", 1)
	log.waitLen(t, "the first event, handled until released", 1)
	e = append(e, putNFrom(t, s, "busy", e[0], 1)...)
	second := rdb.XRevRangeN(ctx, key, "+", "-", 1).Val()[0].ID
	// The second event read, and the checked read that follows its read (or
	// read it) done: its batch waits for the handler, and nothing reads
	// until it is taken.
	waitFor(t, "the second event read", func() bool { mu.Lock(); defer mu.Unlock(); return past == second })
	e = append(e, putNFrom(t, s, "busy", e[1], 3)...)
	trim(t, rdb, 2, key) // the third event was never delivered
	left := rdb.XRange(ctx, key, "-", "+").Val()
	free()
	want := []string{e[0], e[1], "gap", e[3], e[4]}
	log.waitLen(t, "the gap and the events left", len(want))
	seq, gaps := log.settle(100*time.Millisecond, cancel, done)
	if fmt.Sprint(seq) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", seq, want)
	}
	if g := gaps[0]; g.Reason != stream.GapTrimmed || g.To != left[0].ID {
		t.Errorf("gap %+v, want trimmed to %s", g, left[0].ID)
	}
}

// afterCheckedRead is a hook that calls f when a consumer's checked read
// (a MULTI that holds XINFO GROUPS and an XREADGROUP) has returned, with
// the group's last delivered entry before that read (of the first group
// listed) and the entries the read returned.
type afterCheckedRead func(last string, read []string)

func (afterCheckedRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (afterCheckedRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (f afterCheckedRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		last, read, checked := "", []string(nil), false
		for _, c := range cmds {
			switch c := c.(type) {
			case *redis.XInfoGroupsCmd:
				if gs := c.Val(); len(gs) > 0 {
					last = gs[0].LastDeliveredID
				}
			case *redis.XStreamSliceCmd:
				checked = true
				for _, st := range c.Val() {
					for _, m := range st.Messages {
						read = append(read, m.ID)
					}
				}
			}
		}
		if checked && (err == nil || errors.Is(err, redis.Nil)) {
			f(last, read)
		}
		return err
	}
}

// cmpID compares two stream entry IDs (ms-seq) numerically.
func cmpID(a, b string) int {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	ai, _ := strconv.ParseUint(am, 10, 64)
	bi, _ := strconv.ParseUint(bm, 10, 64)
	if c := cmp.Compare(ai, bi); c != 0 {
		return c
	}
	ai, _ = strconv.ParseUint(as, 10, 64)
	bi, _ = strconv.ParseUint(bs, 10, 64)
	return cmp.Compare(ai, bi)
}

// TestConsumeTrimRightBeforeBlockingRead: events appended and the oldest
// of them trimmed between a checked read that found nothing new and the
// blocking read that follows it. That read starts at the first event left
// and moves the group past it; the check after it reports the trim, from
// where the group stood before, ahead of that event.
func TestConsumeTrimRightBeforeBlockingRead(t *testing.T) {
	forTiers(t, consumeTrimRightBeforeBlockingRead)
}

func consumeTrimRightBeforeBlockingRead(t *testing.T, rdb redis.UniversalClient) {
	trimRightBeforeBlockingRead(t, rdb, false)
}

// TestConsumeTrimBeforeBlockingReadCheckFails: as above, but the checked
// read that follows the blocking read fails (a connection error, before it
// is sent). The events that read returned are held, not delivered
// unchecked, and the check is tried again from where the group stood before
// them: the trim is still reported, ahead of the event left. (Before, they
// were delivered without the gap: the next check started past them.)
func TestConsumeTrimBeforeBlockingReadCheckFails(t *testing.T) {
	forTiers(t, consumeTrimBeforeBlockingReadCheckFails)
}

func consumeTrimBeforeBlockingReadCheckFails(t *testing.T, rdb redis.UniversalClient) {
	trimRightBeforeBlockingRead(t, rdb, true)
}

// trimRightBeforeBlockingRead puts 3 events and trims 2 of them right
// before a consumer's blocking read, and with failCheck fails the checked
// read that follows it once; the consumer reports the gap ahead of the
// event left.
func trimRightBeforeBlockingRead(t *testing.T, rdb redis.UniversalClient, failCheck bool) {
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	key := keys.Of(s).Events("race")
	blocking := redis.NewClient(rdb.(*redis.Client).Options())
	t.Cleanup(func() { _ = blocking.Close() })
	var armed, failing atomic.Bool
	written := make(chan []string, 1)
	blocking.AddHook(beforeBlockingRead(func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		var ids []string
		for range 3 {
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "race"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
			if err != nil {
				t.Error(err)
			}
			ids = append(ids, cfg.CheckpointID)
		}
		if err := rdb.XTrimMaxLen(ctx, key, 1).Err(); err != nil {
			t.Error(err)
		}
		failing.Store(failCheck)
		written <- ids
	}))
	errCut := errors.New("connection cut by the test")
	blocking.AddHook(failChecked(func() error { // the checked reads go through the blocking client too
		if failing.CompareAndSwap(true, false) {
			return errCut
		}
		return nil
	}))
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: 1, Block: 50 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, BlockingClient: blocking})
	if err != nil {
		t.Fatal(err)
	}
	var cuts atomic.Int32
	log, cancel, done := consumeLogged(sub, "race", nil, func(err error) {
		if !errors.Is(err, errCut) {
			t.Errorf("reported: %v", err)
		}
		cuts.Add(1)
	})
	defer func() { cancel(); <-done }()
	first := putN(t, s, "race", 1)
	log.waitLen(t, "the first event", 1)
	armed.Store(true) // the next blocking read finds 3 new events, 2 of them trimmed
	ids := <-written
	want := []string{first[0], "gap", ids[2]}
	log.waitLen(t, "the gap and the event left", len(want))
	if seq, _ := log.settle(100*time.Millisecond, cancel, done); fmt.Sprint(seq) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", seq, want)
	}
	wantCuts := int32(0)
	if failCheck {
		wantCuts = 1
	}
	if cuts.Load() != wantCuts {
		t.Fatalf("%d checked reads failed, want %d", cuts.Load(), wantCuts)
	}
}

// failChecked is a hook that fails a checked read (a MULTI holding XINFO
// GROUPS) without sending it when f returns an error.
type failChecked func() error

func (failChecked) DialHook(next redis.DialHook) redis.DialHook { return next }

func (failChecked) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (f failChecked) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if _, ok := c.(*redis.XInfoGroupsCmd); ok {
				if err := f(); err != nil {
					for _, c := range cmds {
						c.SetErr(err)
					}
					return err
				}
				break
			}
		}
		return next(ctx, cmds)
	}
}

// beforeBlockingRead is a hook that calls f right before a blocking read
// (XREAD or XREADGROUP outside a MULTI) is sent.
type beforeBlockingRead func()

func (beforeBlockingRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f beforeBlockingRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if _, ok := cmd.(*redis.XStreamSliceCmd); ok {
			f()
		}
		return next(ctx, cmd)
	}
}

func (beforeBlockingRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// consumeLogged runs consumer "c1" of group "workers" on a thread's stream
// from its beginning, in the background, recording in a gapLog the events
// it handles and the gaps it reports, in order. busy, when not nil, runs in
// the handler after each event is recorded, with the count of events
// handled so far (the handler runs on Consume's goroutine, one call at a
// time); other receives every other report. cancel ends it; done is closed
// once it has.
func consumeLogged(sub *stream.Subscriber, thread string, busy func(n int), other func(error)) (log *gapLog, cancel context.CancelFunc, done <-chan struct{}) {
	log = &gapLog{}
	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan struct{})
	calls := 0
	go func() {
		defer close(closed)
		_ = sub.Consume(ctx, "workers", "c1", func(_ context.Context, ev stream.Event) error {
			log.add(ev, nil)
			if calls++; busy != nil {
				busy(calls)
			}
			return nil
		}, stream.ConsumeOptions{ThreadID: thread, Start: stream.FromBeginning, MinIdle: time.Hour, OnError: func(ev stream.Event, err error) {
			if errors.Is(err, stream.ErrGap) {
				log.add(ev, err)
				return
			}
			other(err)
		}})
	}()
	return log, cancel, closed
}
