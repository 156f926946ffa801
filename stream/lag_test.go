package stream_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// lagPoints returns redcheck.consumer.lag's points of group, by
// messaging.destination.name ("" when the point has none).
func lagPoints(t *testing.T, reader *sdkmetric.ManualReader, group string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	must(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "redcheck.consumer.lag" {
				continue
			}
			g, ok := m.Data.(metricdata.Gauge[int64])
			if !ok {
				t.Fatalf("redcheck.consumer.lag: %T, want an int64 gauge", m.Data)
			}
			for _, p := range g.DataPoints {
				if v, _ := p.Attributes.Value("messaging.consumer.group.name"); v.AsString() != group {
					continue
				}
				if v, _ := p.Attributes.Value("messaging.system"); v.AsString() != "redis" {
					t.Errorf("lag point without messaging.system=redis: %v", p.Attributes)
				}
				dest, _ := p.Attributes.Value("messaging.destination.name")
				out[dest.AsString()] = p.Value
			}
		}
	}
	return out
}

// TestConsumeLag: while Consume runs, redcheck.consumer.lag reports, per
// stream it reads, the entries not yet delivered to its group: some while
// the handler holds the first event, none once every event is handled;
// no point once Consume returns. A consumer of one thread's stream reports
// its point without the stream's name. Real Redis only: miniredis's XINFO
// GROUPS gives the stream's length as the lag.
func TestConsumeLag(t *testing.T) { consumeLag(t, redistest.Real(t)) }

func consumeLag(t *testing.T, rdb redis.UniversalClient) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	s := newSaver(t, rdb, redissaver.Options{Shards: 2})
	l := keys.Of(s)
	sub, err := stream.New(rdb, stream.Options{Prefix: l.Prefix(), Shards: 2, Count: 1, Block: 50 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, MeterProvider: mp})
	must(t, err)
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "lagging"}
	for i := range 10 {
		v := fmt.Sprint(i + 1)
		cfg, err = s.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
			ChannelValues: map[string]any{"msgs": i}, ChannelVersions: map[string]string{"msgs": v}},
			checkpoint.Metadata{"step": i}, map[string]string{"msgs": v})
		must(t, err)
	}
	feed, other := l.Feed(l.Shard("lagging")), l.Feed(1-l.Shard("lagging"))
	feedLen := rdb.XLen(ctx, feed).Val()
	threadLen := rdb.XLen(ctx, l.Events("lagging")).Val()
	if feedLen < 10 || threadLen < 10 {
		t.Fatalf("feed %d entries, thread stream %d: want 10 or more", feedLen, threadLen)
	}

	// consume runs Consume of group with a handler that holds the first
	// event until release is closed; it returns when the handler holds it,
	// and a func that waits for every event handled, stops the consumer
	// and waits for Consume to return.
	consume := func(group, thread string, want int) (release chan struct{}, stop func()) {
		release = make(chan struct{})
		held := make(chan struct{})
		var handled atomic.Int64
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		first := true
		go func() {
			defer close(done)
			_ = sub.Consume(cctx, group, "c", func(context.Context, stream.Event) error {
				if first {
					first = false
					close(held)
					<-release
				}
				handled.Add(1)
				return nil
			}, stream.ConsumeOptions{ThreadID: thread, Start: stream.FromBeginning})
		}()
		<-held
		return release, func() {
			waitFor(t, "every event handled", func() bool { return handled.Load() >= int64(want) })
			cancel()
			<-done
		}
	}

	release, stop := consume("g", "", int(feedLen))
	got := lagPoints(t, reader, "g")
	t.Logf("feed of %d entries, handler holding the first: lag %v", feedLen, got)
	if len(got) != 2 || got[other] != 0 || got[feed] < 1 || got[feed] > feedLen-1 {
		t.Errorf("handler holding the first event: lag %v, want %s: 1 to %d, %s: 0", got, feed, feedLen-1, other)
	}
	close(release)
	waitFor(t, "lag 0", func() bool {
		got = lagPoints(t, reader, "g")
		return len(got) == 2 && got[feed] == 0 && got[other] == 0
	})
	stop()
	if got := lagPoints(t, reader, "g"); len(got) != 0 {
		t.Errorf("Consume returned: lag %v, want no point", got)
	}

	release, stop = consume("gt", "lagging", int(threadLen))
	got = lagPoints(t, reader, "gt")
	if len(got) != 1 || got[""] < 1 || got[""] > threadLen-1 {
		t.Errorf("a thread's consumer: lag %v, want one point without a stream name, 1 to %d", got, threadLen-1)
	}
	close(release)
	stop()
}
