package stream_test

import (
	"context"
	"errors"
	"github.com/graphstate/redcheck/internal/keys"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// TestGapHandlingBlocksNothing: reporting 4,900 trimmed pending entries and
// a trimmed subscription cursor on a 5,000-event stream proceeds in
// bounded steps: a PING loop on another connection never waits more than
// 50 ms, and no command of the run reaches SLOWLOG's 50 ms.
func TestGapHandlingBlocksNothing(t *testing.T) {
	const n, kept = 5000, 100
	rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t)})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	sub := newSubscriber(t, rdb, s)
	putN(t, s, "big", n)
	key := keys.Of(s).Events("big")
	first := rdb.XRangeN(ctx, key, "-", "+", 1).Val()[0].ID

	// c1 fails every event: n pending.
	ctx1, stop1 := context.WithCancel(ctx)
	var failed atomic.Int64
	done1 := make(chan struct{})
	go func() {
		defer close(done1)
		sub.Consume(ctx1, "g", "c1", func(context.Context, stream.Event) error { failed.Add(1); return errors.New("no") },
			stream.ConsumeOptions{ThreadID: "big", Start: stream.FromBeginning, MinIdle: time.Hour})
	}()
	waitFor(t, "every event pending", func() bool { return failed.Load() == n })
	stop1()
	<-done1
	trim(t, rdb, kept, key)
	m := redistest.NewBlockMeter(t, rdb, redistest.BlockMeterOptions{})

	cctx, stop := context.WithCancel(ctx)
	var lost atomic.Int64
	var handled atomic.Int64
	go sub.Consume(cctx, "g", "c2", func(context.Context, stream.Event) error { handled.Add(1); return nil },
		stream.ConsumeOptions{ThreadID: "big", MinIdle: 10 * time.Millisecond, OnError: func(_ stream.Event, err error) {
			var g *stream.GapError
			if errors.As(err, &g) {
				lost.Add(int64(len(g.Lost)))
			}
		}})
	waitFor(t, "every trimmed pending entry reported", func() bool { return lost.Load() == n-kept && handled.Load() == kept })
	stop()
	log, cancel, done := follow(sub, stream.Query{ThreadID: "big", From: first})
	waitFor(t, "the gap and the events left", func() bool { seq, _ := log.snapshot(); return len(seq) == kept+1 })
	cancel()
	<-done

	ping, slow, cmd := m.Read(t)
	if ping > 50*time.Millisecond {
		t.Errorf("worst PING %v", ping)
	}
	if slow > 50*time.Millisecond {
		t.Errorf("SLOWLOG: %s took %v", cmd, slow)
	}
	t.Logf("worst PING %v, worst SLOWLOG %v (%s) while %d lost entries were reported", ping.Round(time.Microsecond), slow, cmd, lost.Load())
}
