package stream_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// TestSubscribeSinceTrimmed: a subscription from a time claims every event
// appended at or after it. When Redis trimmed some of them, it yields one
// gap (on a server that counts the entries added to a stream; elsewhere one
// ErrTrimUnknown), then the events left, exactly once; resumed from the
// gap's Cursor, it reports the gap again. A time before every event of a
// stream that was never trimmed, or one the stream still holds an entry
// before, yields no gap. For one thread and for every thread.
func TestSubscribeSinceTrimmed(t *testing.T) { forTiers(t, subscribeSinceTrimmed) }

func subscribeSinceTrimmed(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	for _, thread := range []string{"since", ""} {
		t.Run("thread="+thread, func(t *testing.T) {
			s := newSaver(t, rdb, redissaver.Options{Shards: 2})
			sub := newSubscriber(t, rdb, s)
			streams := []string{keys.Of(s).Events("since")}
			if thread == "" {
				streams = feeds(s)
			}
			beforeAll := pause()
			old := putN(t, s, "since", 3)
			since := pause()
			ids := putN(t, s, "since", 5)
			reports := rdb.XInfoStream(ctx, keys.Of(s).Events("since")).Val().EntriesAdded > 0 // Redis counts the entries added

			// Nothing trimmed yet: from before every event, from between.
			for name, c := range map[string]struct {
				at   time.Time
				want []string
			}{
				"before every event": {beforeAll, append(append([]string{}, old...), ids...)},
				"between events":     {since, ids},
			} {
				log, cancel, done := follow(sub, stream.Query{ThreadID: thread, Since: c.at})
				log.waitLen(t, name, len(c.want))
				cancel()
				<-done
				seq, _ := log.snapshot()
				var unknown []error
				if !reports && name == "before every event" { // the stream starts past the time
					unknown = []error{stream.ErrTrimUnknown}
				}
				if fmt.Sprint(seq) != fmt.Sprint(c.want) || !errsAre(log.errs, unknown) {
					t.Errorf("%s: got %v, errors %v; want %v, errors %v", name, seq, log.errs, c.want, unknown)
				}
			}

			trim(t, rdb, 2, streams...) // the 3 events before the time and 3 after it are gone
			first := firstEntry(t, rdb, streams)
			log, cancel, done := follow(sub, stream.Query{ThreadID: thread, Since: since})
			defer func() { cancel(); <-done }()
			log.waitLen(t, "the 2 events left", 2)
			later := putN(t, s, "since", 1)
			want := append(append([]string{}, ids[3:]...), later...)
			if reports {
				want = append([]string{"gap"}, want...)
			}
			log.waitLen(t, "the later event", len(want))
			seq, gaps := log.settle(100*time.Millisecond, cancel, done)
			if fmt.Sprint(seq) != fmt.Sprint(want) {
				t.Errorf("trimmed: got %v, want %v", seq, want)
			}
			if !reports {
				if !errsAre(log.errs, []error{stream.ErrTrimUnknown}) {
					t.Errorf("trimmed, deletions unreported: errors %v, want one ErrTrimUnknown", log.errs)
				}
				return
			}
			if len(log.errs) != 0 {
				t.Errorf("trimmed: errors %v", log.errs)
			}
			if g := gaps[0]; g.Reason != stream.GapTrimmed || g.From != "" || g.To != first {
				t.Errorf("gap %+v, want trimmed, from a time, to %s", g, first)
			}

			// Resumed from the gap's Cursor: the gap again, then the same events.
			again, cancel2, done2 := follow(sub, stream.Query{ThreadID: thread, From: log.cursors[0]})
			again.waitLen(t, "the resumed subscription", len(want))
			cancel2()
			<-done2
			if seq, _ := again.snapshot(); fmt.Sprint(seq) != fmt.Sprint(want) || len(again.errs) != 0 {
				t.Errorf("resumed from the gap's cursor %q: got %v, errors %v; want %v", log.cursors[0], seq, again.errs, want)
			}
		})
	}
}

// pause returns a time between the events written before and after it
// (stream IDs count milliseconds).
func pause() time.Time {
	time.Sleep(3 * time.Millisecond)
	at := time.Now()
	time.Sleep(3 * time.Millisecond)
	return at
}

// firstEntry returns the first entry ID of the only stream of keys that
// holds any.
func firstEntry(t *testing.T, rdb redis.UniversalClient, keys []string) string {
	t.Helper()
	for _, k := range keys {
		if m := rdb.XRangeN(context.Background(), k, "-", "+", 1).Val(); len(m) > 0 {
			return m[0].ID
		}
	}
	t.Fatal("every stream is empty")
	return ""
}

// errsAre reports whether errs match want one for one (errors.Is).
func errsAre(errs, want []error) bool {
	if len(errs) != len(want) {
		return false
	}
	for i := range errs {
		if !errors.Is(errs[i], want[i]) {
			return false
		}
	}
	return true
}

// TestSinceSettledAsksOnce: a subscription from a time its stream holds an
// entry before asks Redis whether the stream was trimmed (XINFO STREAM) at
// its first read only, not at every read while no later event comes.
func TestSinceSettledAsksOnce(t *testing.T) { forTiers(t, sinceSettledAsksOnce) }

func sinceSettledAsksOnce(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	putN(t, s, "settled", 2)
	since := pause()
	blocking := redis.NewClient(rdb.(*redis.Client).Options())
	t.Cleanup(func() { _ = blocking.Close() })
	var reads, infos atomic.Int64
	blocking.AddHook(countInfos{&reads, &infos})
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: 1, Block: 20 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, BlockingClient: blocking})
	if err != nil {
		t.Fatal(err)
	}
	log, cancel, done := follow(sub, stream.Query{ThreadID: "settled", Since: since})
	defer func() { cancel(); <-done }()
	waitFor(t, "5 checked reads", func() bool { return reads.Load() >= 5 }) // one per idle block
	later := putN(t, s, "settled", 1)
	log.waitLen(t, "the later event", 1)
	if seq, _ := log.snapshot(); fmt.Sprint(seq) != fmt.Sprint(later) || len(log.errs) != 0 {
		t.Errorf("got %v, errors %v; want %v", seq, log.errs, later)
	}
	if n := infos.Load(); n != 1 {
		t.Errorf("XINFO STREAM asked %d times in %d checked reads, want once", n, reads.Load())
	}
}

// countInfos counts the transactions of checked reads (those that hold an
// XREAD) and the XINFO STREAM commands among them.
type countInfos struct{ reads, infos *atomic.Int64 }

func (countInfos) DialHook(next redis.DialHook) redis.DialHook { return next }

func (countInfos) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h countInfos) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			switch c.Name() {
			case "xread":
				h.reads.Add(1)
			case "xinfo":
				h.infos.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}
