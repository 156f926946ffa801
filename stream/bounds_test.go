package stream_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"net"
	"slices"
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

// TestSubscriptionsLeavePoolAlone: 100 live subscriptions on the caller's
// client (default pool: 10 per CPU) leave a concurrent Put loop on the same
// client unaffected: the blocking reads use connections of their own.
func TestSubscriptionsLeavePoolAlone(t *testing.T) { forTiers(t, subscriptionsLeavePoolAlone) }

func subscriptionsLeavePoolAlone(t *testing.T, rdb redis.UniversalClient) {
	const subs, puts = 100, 300
	s := newSaver(t, rdb, redissaver.Options{Shards: 4})
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: 4, Block: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	putLoop := func(threads string) (p50, p99 time.Duration) {
		cfgs := make([]checkpoint.Config, subs)
		var lat []time.Duration
		for i := range puts {
			k := i % subs
			if cfgs[k].ThreadID == "" {
				cfgs[k] = checkpoint.Config{ThreadID: fmt.Sprintf("%s-%d", threads, k)}
			}
			t0 := time.Now()
			cfg, err := s.Put(context.Background(), cfgs[k], checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			cfgs[k] = cfg
		}
		slices.Sort(lat)
		return lat[len(lat)/2], lat[len(lat)*99/100]
	}
	base50, base99 := putLoop("before")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var got atomic.Int64
	seen := make([]atomic.Bool, subs)
	found := nowFound(t, rdb)
	for i := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, err := range sub.Subscribe(ctx, stream.Query{ThreadID: fmt.Sprintf("sub-%d", i)}) {
				if err == nil && !seen[i].Swap(true) {
					got.Add(1)
				}
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	found(subs)                        // every subscription has its position: none misses its event below
	time.Sleep(100 * time.Millisecond) // and goes on to block in Redis
	// Puts to other threads: the subscriptions only wait. Then puts to the
	// subscribed threads: each wakes one, which reads its event.
	idle50, idle99 := putLoop("other")
	with50, with99 := putLoop("sub")
	waitFor(t, "every subscription to get an event", func() bool { return got.Load() == subs })
	r := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	t.Logf("Put p50/p99: without subscriptions %v/%v; with %d waiting %v/%v; with each Put waking one %v/%v",
		r(base50), r(base99), subs, r(idle50), r(idle99), r(with50), r(with99))
	stats := rdb.(interface{ PoolStats() *redis.PoolStats }).PoolStats()
	if stats.Timeouts != 0 {
		t.Errorf("the caller's pool timed out %d times", stats.Timeouts)
	}
	// A starved pool makes Put wait for a connection: seconds. Noise on a
	// loaded 2-core machine stays well under this.
	if idle99 > max(10*base99, 250*time.Millisecond) || with99 > max(20*base99, 250*time.Millisecond) {
		t.Errorf("Put p99 %v with subscriptions waiting, %v with them woken, %v without", idle99, with99, base99)
	}
}

// TestDeadLetterBounded: a dead-letter stream stays within
// DeadLetterMaxLen (Redis trims in whole nodes of 100 entries) however many
// events die, and takes the TTL of a deleted thread's stream.
func TestDeadLetterBounded(t *testing.T) { forTiers(t, deadLetterBounded) }

func deadLetterBounded(t *testing.T, rdb redis.UniversalClient) {
	const n, maxLen = 250, 10
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	sub := newSubscriber(t, rdb, s)
	key := keys.Of(s).Events("dl")
	dead := sub.DeadLetter(key, "g")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var failures atomic.Int64
	go sub.Consume(ctx, "g", "c", func(context.Context, stream.Event) error {
		failures.Add(1)
		return errors.New("dead on arrival")
	}, stream.ConsumeOptions{ThreadID: "dl", Start: stream.FromBeginning, MinIdle: 10 * time.Millisecond, MaxDeliveries: 1, DeadLetterMaxLen: maxLen})
	putN(t, s, "dl", n)
	waitFor(t, "every event buried", func() bool {
		p := rdb.XPending(context.Background(), key, "g").Val()
		return failures.Load() == n && p != nil && p.Count == 0
	})
	if l := rdb.XLen(context.Background(), dead).Val(); l < maxLen || l >= maxLen+100 {
		t.Errorf("dead-letter stream holds %d entries, want %d to %d", l, maxLen, maxLen+99)
	}
	if ttl := rdb.PTTL(context.Background(), dead).Val(); ttl != -1 {
		t.Errorf("dead-letter stream of a live thread has TTL %v", ttl)
	}
	if err := s.DeleteThread(context.Background(), "dl"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead-letter stream to follow the stream's TTL", func() bool {
		ttl, deadTTL := rdb.PTTL(context.Background(), key).Val(), rdb.PTTL(context.Background(), dead).Val()
		return ttl > 0 && deadTTL > 0 && deadTTL <= ttl+time.Second
	})
}

// TestValueStreamsBounded: with values included, a thread's stream and its
// shard's feed stay within their lengths under a long run, and each entry
// within its fixed fields plus MaxValueBytes per channel.
func TestValueStreamsBounded(t *testing.T) { forTiers(t, valueStreamsBounded) }

func valueStreamsBounded(t *testing.T, rdb redis.UniversalClient) {
	const maxLen, feedMaxLen, maxValue, puts = 20, 40, 1 << 10, 400
	s := newSaver(t, rdb, redissaver.Options{Shards: 1, Events: redissaver.Events{
		IncludeValues: true, MaxLen: maxLen, FeedMaxLen: feedMaxLen, MaxValueBytes: maxValue}})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "big"}
	versions := map[string]string{}
	for i := range puts {
		versions["small"], versions["large"] = s.NextVersion(versions["small"]), s.NextVersion(versions["large"])
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelVersions: maps2(versions),
			ChannelValues: map[string]any{"small": strings.Repeat("s", maxValue/2), "large": strings.Repeat("l", 4*maxValue)}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, maps2(versions)); err != nil {
			t.Fatal(err)
		}
	}
	for key, limit := range map[string]int64{keys.Of(s).Events("big"): maxLen, keys.Of(s).Feed(0): feedMaxLen} {
		msgs := rdb.XRange(ctx, key, "-", "+").Val()
		if n := int64(len(msgs)); n < limit || n >= limit+100 {
			t.Errorf("%s holds %d entries, want %d to %d", key, n, limit, limit+99)
		}
		for _, m := range msgs {
			size := 0
			for k, v := range m.Values {
				size += len(k) + len(fmt.Sprint(v))
			}
			if size > 512+2*maxValue { // fixed fields, then at most MaxValueBytes per channel
				t.Errorf("%s: entry %s holds %d bytes", key, m.ID, size)
				break
			}
		}
	}
}

func maps2(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestBackoffEndsWithContext: the waits between reconnection attempts of
// Subscribe and Consume end as soon as the context does.
func TestBackoffEndsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: every command fails at once
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	sub, err := stream.New(rdb, stream.Options{MaxBackoff: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func(ctx context.Context, failed func()){
		"subscribe": func(ctx context.Context, failed func()) {
			for _, err := range sub.Subscribe(ctx, stream.Query{ThreadID: "t"}) {
				if err != nil {
					failed()
				}
			}
		},
		"consume": func(ctx context.Context, failed func()) {
			sub.Consume(ctx, "g", "c", func(context.Context, stream.Event) error { return nil },
				stream.ConsumeOptions{OnError: func(stream.Event, error) { failed() }})
		},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(ctx, func() { once.Do(func() { time.AfterFunc(50*time.Millisecond, cancel) }) })
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: still backing off 5s after its context ended (MaxBackoff 1m)", name)
			cancel()
			<-done
		}
		cancel()
	}
}
