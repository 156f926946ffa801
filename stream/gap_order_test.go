package stream_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// TestGapOrderAroundABlockingRead: a stream that changes between a blocking
// read that returned an event and the checked read after it. Lost after
// the event: the event is yielded before the gap, which follows it. Trimmed
// past the position before it: the gap is yielded first, and resuming from
// the gap's Cursor yields the event again, after the gap again. Written on
// after the event, then lost and written again with later IDs: the event,
// then the gap (what followed the event is gone), then the new stream's
// event. Either way no Cursor skips an event not yet yielded. The change is made by a hook on
// the blocking reads' client, right as the read returns.
func TestGapOrderAroundABlockingRead(t *testing.T) {
	forTiers(t, func(t *testing.T, rdb redis.UniversalClient) {
		for _, thread := range []string{"order", ""} {
			t.Run("thread="+thread+"/lost", func(t *testing.T) { gapAfterRead(t, rdb, thread, "lost") })
			t.Run("thread="+thread+"/trimmed", func(t *testing.T) { gapAfterRead(t, rdb, thread, "trimmed") })
			t.Run("thread="+thread+"/rewritten", func(t *testing.T) { gapAfterRead(t, rdb, thread, "rewritten") })
		}
	})
}

func gapAfterRead(t *testing.T, rdb redis.UniversalClient, thread, change string) {
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	key := keys.Of(s).Events("order")
	if thread == "" {
		key = keys.Of(s).Feed(0)
	}
	blocking := redis.NewClient(rdb.(*redis.Client).Options())
	t.Cleanup(func() { _ = blocking.Close() })
	var armed atomic.Bool
	rewrote := make(chan [2]string, 1) // "rewritten": the event lost, the event of the new stream
	blocking.AddHook(afterBlockingRead(func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		var err error
		switch change {
		case "lost":
			err = rdb.Del(ctx, key).Err()
		case "trimmed":
			err = rdb.XTrimMaxLen(ctx, key, 1).Err()
		case "rewritten":
			// One more event after the one just read, the stream lost,
			// then written again with a later ID.
			var ids [2]string
			for i := range ids {
				if i == 1 {
					err = errors.Join(err, rdb.Del(ctx, key).Err())
					time.Sleep(2 * time.Millisecond)
				}
				cfg, perr := s.Put(ctx, checkpoint.Config{ThreadID: "order"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
				ids[i], err = cfg.CheckpointID, errors.Join(err, perr)
			}
			rewrote <- ids
		}
		if err != nil {
			t.Error(err)
		}
	}))
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: 1, Block: 50 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, BlockingClient: blocking})
	if err != nil {
		t.Fatal(err)
	}
	before := putN(t, s, "order", 2)
	pre := rdb.XRange(ctx, key, "-", "+").Val()
	log, cancel, done := follow(sub, stream.Query{ThreadID: thread, From: stream.FromBeginning})
	defer func() { cancel(); <-done }()
	log.waitLen(t, "the events before", len(before))
	armed.Store(true)
	e := putN(t, s, "order", 1) // wakes the blocking read; the hook then changes the stream
	// Lost after the event: a gap after it; and, since the stream no longer
	// holds the position before it either, Redis cannot tell whether the
	// event followed a loss too: a gap ahead of it as well.
	want := append(slices.Clone(before), "gap", e[0], "gap")
	reason, from := stream.GapStreamLost, ""
	switch change {
	case "trimmed":
		// The event is still held: only the gap ahead of it.
		want = append(slices.Clone(before), "gap", e[0])
		reason, from = stream.GapTrimmed, pre[len(pre)-1].ID
	case "rewritten":
		// What followed the event was lost: a gap after it, then the new
		// stream's event.
		ids := <-rewrote
		want = append(slices.Clone(before), "gap", e[0], "gap", ids[1])
		reason = stream.GapTrimmed
	}
	log.waitLen(t, "the event and the gap", len(want))
	time.Sleep(100 * time.Millisecond) // nothing more may come
	log.mu.Lock()
	seq, gaps, cursors, errs := slices.Clone(log.seq), slices.Clone(log.gaps), slices.Clone(log.cursors), slices.Clone(log.errs)
	log.mu.Unlock()
	if armed.Load() {
		t.Fatal("the hook did not run")
	}
	if fmt.Sprint(seq) != fmt.Sprint(want) || len(errs) > 0 {
		t.Fatalf("got %v (errors %v), want %v", seq, errs, want)
	}
	g := gaps[len(gaps)-1] // the one after the event, but for "trimmed"
	if g.Reason != reason || (from != "" && g.From != from) {
		t.Errorf("gap %+v, want %s from %q", g, reason, from)
	}
	if change != "trimmed" && (gaps[0].Reason != stream.GapTrimmed || gaps[0].From != pre[len(pre)-1].ID) {
		t.Errorf("gap ahead %+v, want trimmed from %s", gaps[0], pre[len(pre)-1].ID)
	}
	if change != "trimmed" {
		return
	}
	// The gap's Cursor resumes before the event it precedes: a subscription
	// from it reports the gap again, then yields the event.
	gc := cursors[slices.Index(seq, "gap")]
	if !strings.HasPrefix(gc, from+"~") {
		t.Errorf("gap cursor %q, want the position %s before it", gc, from)
	}
	again, cancel2, done2 := follow(sub, stream.Query{ThreadID: thread, From: gc})
	defer func() { cancel2(); <-done2 }()
	again.waitLen(t, "the resumed subscription", 2)
	if seq, _ := again.snapshot(); fmt.Sprint(seq) != fmt.Sprint([]string{"gap", e[0]}) {
		t.Errorf("resumed from the gap's cursor: %v, want [gap %s]", seq, e[0])
	}
}

// afterBlockingRead is a hook that calls f when a blocking XREAD returns
// entries, before the reader sees them.
type afterBlockingRead func()

func (afterBlockingRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f afterBlockingRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if c, ok := cmd.(*redis.XStreamSliceCmd); ok && err == nil && len(c.Val()) > 0 {
			f()
		}
		return err
	}
}

func (afterBlockingRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
