package stream_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// TestGapModel writes a thread's events while trimming and deleting its
// stream at random, with subscriptions reading in small batches meanwhile,
// then checks Subscribe's promise on what each yielded: every event it
// delivered comes once, in the order written, and wherever events written
// were not delivered, a gap (or, from a time on a server that cannot tell,
// an ErrTrimUnknown) comes between the delivered events around them. One
// subscription starts at a time before the first event, one at "now"
// after a few events; each follows one thread, or every thread of two
// shards. Seeds are fixed, timing is not: a failure names its
// seed and logs the gaps, cursors and operations.
func TestGapModel(t *testing.T) { forTiers(t, gapModel) }

func gapModel(t *testing.T, rdb redis.UniversalClient) {
	forSeeds(t, rdb, func(t *testing.T, rdb redis.UniversalClient, seed uint64) {
		for _, thread := range []string{"model", ""} {
			t.Run("thread="+thread, func(t *testing.T) { gapModelRun(t, rdb, seed, thread) })
		}
	})
}

// gapModelRun follows thread "model" (thread "model"), or every thread of
// two shards (thread ""), whose feed it then trims and deletes.
func gapModelRun(t *testing.T, rdb redis.UniversalClient, seed uint64, thread string) {
	ctx := context.Background()
	rng, s, sub, key := modelSetup(t, rdb, seed, thread == "")
	since := pause()
	fromTime, cancel1, done1 := follow(sub, stream.Query{ThreadID: thread, Since: since})
	defer func() { cancel1(); <-done1 }()
	written := putN(t, s, "model", 3)
	parent := written[len(written)-1]
	// A time holds no entry to tell a lost stream by: the first events
	// are read before anything can be lost (see Gaps in the package doc).
	fromTime.waitLen(t, "the first events", len(written))
	now, err := sub.Position(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	fromNow, cancel2, done2 := follow(sub, stream.Query{ThreadID: thread, From: now})
	defer func() { cancel2(); <-done2 }()
	nowFrom := len(written)

	more, ops := modelOps(t, rdb, s, key, rng, parent)
	written = append(written, more...)
	parent = more[len(more)-1]
	last := putNFrom(t, s, "model", parent, 1)[0]
	written = append(written, last)
	for name, c := range map[string]struct {
		log     *gapLog
		written []string
	}{
		"since": {fromTime, written},
		"now":   {fromNow, written[nowFrom:]},
	} {
		waitFor(t, name+": the last event", func() bool { seq, _ := c.log.snapshot(); return slices.Contains(seq, last) })
		c.log.mu.Lock()
		seq, unknown := slices.Clone(c.log.seq), slices.Clone(c.log.unknownAt)
		var other []error
		for _, err := range c.log.errs {
			if !errors.Is(err, stream.ErrTrimUnknown) {
				other = append(other, err)
			}
		}
		c.log.mu.Unlock()
		if len(other) > 0 {
			t.Errorf("%s: errors %v", name, other)
		}
		if err := checkGapModel(c.written, seq, unknown); err != "" {
			t.Errorf("%s (seed %d): %s\nwritten %v\nyielded %v", name, seed, err, c.written, seq)
			c.log.mu.Lock()
			for i, g := range c.log.gaps {
				t.Logf("gap %d: %+v", i, *g)
			}
			t.Logf("cursors %v", c.log.cursors)
			c.log.mu.Unlock()
			t.Logf("ops %q", ops)
		}
	}
}

// checkGapModel checks a subscription's sequence (checkpoint IDs and "gap")
// against the IDs written, in order: "" when it keeps the promise, else
// what breaks it. unknown lists the positions in seq before which an
// ErrTrimUnknown came, which count as gaps there.
func checkGapModel(written, seq []string, unknown []int) string {
	at := make(map[string]int, len(written))
	for i, id := range written {
		at[id] = i
	}
	gapBefore := map[int]bool{} // index into seq: a gap (or unknown) came right before it
	for _, u := range unknown {
		gapBefore[u] = true
	}
	type got struct{ w, s int } // index in written, index in seq
	var delivered []got
	for i, item := range seq {
		if item == "gap" {
			gapBefore[i+1] = true
			continue
		}
		w, ok := at[item]
		if !ok {
			return "delivered " + item + ", never written"
		}
		if n := len(delivered); n > 0 && w <= delivered[n-1].w {
			return "delivered " + item + " again or out of order"
		}
		delivered = append(delivered, got{w, i})
	}
	prev := got{-1, -1}
	for _, d := range append(delivered, got{len(written), len(seq)}) {
		if d.w > prev.w+1 { // written[prev.w+1 : d.w] were not delivered
			told := false
			for i := prev.s + 1; i <= d.s; i++ {
				told = told || gapBefore[i]
			}
			if !told {
				return "skipped " + written[prev.w+1] + " with no gap"
			}
		}
		prev = d
	}
	return ""
}

// TestConsumeGapModel is TestGapModel for a consumer group: a consumer
// whose handler always succeeds, while the stream is trimmed and deleted
// at random, handles every event once, in the order written, or reports a
// gap (through OnError) between the events it handled around the ones it
// did not.
func TestConsumeGapModel(t *testing.T) { forTiers(t, consumeGapModel) }

func consumeGapModel(t *testing.T, rdb redis.UniversalClient) { forSeeds(t, rdb, consumeGapModelRun) }

func consumeGapModelRun(t *testing.T, rdb redis.UniversalClient, seed uint64) {
	ctx := context.Background()
	rng, s, sub, key := modelSetup(t, rdb, seed, false)
	var mu sync.Mutex
	var other []error // appended by the consumer's goroutine
	log, cancel, done := consumeLogged(sub, "model", nil, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		other = append(other, err)
	})
	defer func() { cancel(); <-done }()
	waitFor(t, "the group", func() bool { return len(rdb.XInfoGroups(ctx, key).Val()) == 1 })

	// A group created at the start of its stream claims no event before it
	// delivered one (see Gaps in the package doc): its first events are
	// handled before anything can be trimmed.
	written := putN(t, s, "model", 3)
	log.waitLen(t, "the first events", len(written))
	more, ops := modelOps(t, rdb, s, key, rng, written[len(written)-1])
	written = append(written, more...)
	parent := written[len(written)-1]
	last := putNFrom(t, s, "model", parent, 1)[0]
	written = append(written, last)
	waitFor(t, "the last event", func() bool { seq, _ := log.snapshot(); return slices.Contains(seq, last) })
	seq, gaps := log.snapshot()
	if err := checkGapModel(written, seq, nil); err != "" {
		t.Errorf("seed %d: %s\nwritten %v\nhandled %v", seed, err, written, seq)
		for i, g := range gaps {
			t.Logf("gap %d: %+v", i, *g)
		}
		t.Logf("cursors %v", log.cursors)
		t.Logf("ops %q", ops)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, err := range other {
		// Redis errors while the stream is deleted under the consumer are
		// expected (NOGROUP between a loss and the group's re-creation).
		t.Logf("reported: %v", err)
	}
}

// forSeeds runs a model test once per fixed seed.
func forSeeds(t *testing.T, rdb redis.UniversalClient, run func(t *testing.T, rdb redis.UniversalClient, seed uint64)) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { run(t, rdb, seed) })
	}
}

// modelSetup returns a model run's random source, a saver, a subscriber
// that reads 2 entries at a time with 20 ms blocks, and the key the run
// trims and deletes: thread "model"'s stream (one shard), or with feed the
// feed of its shard (two shards).
func modelSetup(t *testing.T, rdb redis.UniversalClient, seed uint64, feed bool) (*rand.Rand, *redissaver.Saver, *stream.Subscriber, string) {
	t.Helper()
	shards := 1
	if feed {
		shards = 2
	}
	s := newSaver(t, rdb, redissaver.Options{Shards: shards})
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: shards, Count: 2,
		Block: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	key := keys.Of(s).Events("model")
	if feed {
		key = keys.Of(s).Feed(keys.Of(s).Shard("model"))
	}
	return rand.New(rand.NewPCG(seed, 14)), s, sub, key
}

// modelOps puts, trims and deletes the events of thread "model" at random
// (150 operations, after parent), and returns the checkpoints it put, in
// order, and a log of the operations (each put with its entry ID).
func modelOps(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver, key string, rng *rand.Rand, parent string) (written, ops []string) {
	ctx := context.Background()
	for range 150 {
		switch r := rng.IntN(100); {
		case r < 55:
			ids := putNFrom(t, s, "model", parent, 1+rng.IntN(3))
			written, parent = append(written, ids...), ids[len(ids)-1]
			last := rdb.XRevRangeN(ctx, key, "+", "-", int64(len(ids))).Val()
			for i := range ids {
				e := "?"
				if j := len(ids) - 1 - i; j < len(last) {
					e = last[j].ID
				}
				ops = append(ops, fmt.Sprintf("put %s %s", ids[i], e))
			}
		case r < 70:
			n := int64(1 + rng.IntN(4))
			trim(t, rdb, n, key)
			ops = append(ops, fmt.Sprintf("trim %d", n))
		case r < 78:
			if err := rdb.Del(ctx, key).Err(); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, "del")
		default:
			time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
		}
	}
	if len(written) == 0 {
		written = putNFrom(t, s, "model", parent, 1)
		ops = append(ops, "put "+written[0])
	}
	return written, ops
}
