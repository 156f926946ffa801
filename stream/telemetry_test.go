package stream_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telMarker is put as a value and as metadata, and quoted by a handler's
// error: no span or metric of the consumer may show it.
const telMarker = "SECRET-MARKER-42"

// TestConsumeTelemetry: each event a consumer handles is one consumer span
// (the handler's context carries it) with the messaging attributes and the
// event's address, an error status and error.type for a handler that
// fails; the metrics count the events handled, failed, moved to the
// dead-letter stream, and the gaps; nothing shows a value or a handler's
// message.
func TestConsumeTelemetry(t *testing.T) { forTiers(t, consumeTelemetry) }

func consumeTelemetry(t *testing.T, rdb redis.UniversalClient) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	s := newSaver(t, rdb, redissaver.Options{Shards: 1, Events: redissaver.Events{IncludeValues: true}})
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: 1, Block: 50 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, TracerProvider: tp, MeterProvider: mp})
	must(t, err)
	ctx := context.Background()
	var ids []string
	cfg := checkpoint.Config{ThreadID: "tel"}
	for i := range 3 {
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
			ChannelValues: map[string]any{"msgs": telMarker}, ChannelVersions: map[string]string{"msgs": string(rune('1' + i))}}
		cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i, "note": telMarker}, map[string]string{"msgs": string(rune('1' + i))})
		must(t, err)
		ids = append(ids, cfg.CheckpointID)
	}

	var mu sync.Mutex
	handledOK := map[string]bool{}
	spanless := 0
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sub.Consume(cctx, "g", "c", func(hctx context.Context, ev stream.Event) error {
			mu.Lock()
			defer mu.Unlock()
			if !trace.SpanFromContext(hctx).SpanContext().IsValid() {
				spanless++
			}
			if ev.CheckpointID == ids[0] {
				return errors.New("refused " + telMarker)
			}
			handledOK[ev.CheckpointID] = true
			return nil
		}, stream.ConsumeOptions{Start: stream.FromBeginning, MinIdle: 20 * time.Millisecond, MaxDeliveries: 2})
	}()
	defer func() { cancel(); <-done }()
	dead := sub.DeadLetter(keys.Of(s).Feed(0), "g")
	waitFor(t, "the failing event in the dead-letter stream", func() bool { return rdb.XLen(ctx, dead).Val() == 1 })
	waitFor(t, "the other events handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handledOK) == 2
	})

	// A group lost while the consumer runs: it is made again, a gap.
	must(t, rdb.XGroupDestroy(ctx, keys.Of(s).Feed(0), "g").Err())
	var rm metricdata.ResourceMetrics
	waitFor(t, "a gap counted", func() bool {
		must(t, reader.Collect(ctx, &rm))
		return sumOf(rm, "redcheck.consumer.gaps", "redcheck.gap.reason", "group_lost") == 1
	})
	cancel()
	<-done

	mu.Lock()
	if spanless > 0 {
		t.Errorf("%d handler calls without a span in their context", spanless)
	}
	mu.Unlock()
	var failed, ok, gaps int
	for _, sp := range exp.GetSpans() {
		if sp.Name == "gap" {
			// The gap: a span of its own, with a span event that says why.
			gaps++
			reason := ""
			for _, e := range sp.Events {
				for _, kv := range e.Attributes {
					if e.Name == "redcheck.gap" && kv.Key == "redcheck.gap.reason" {
						reason = kv.Value.AsString()
					}
				}
			}
			if reason != "group_lost" || sp.Status.Code != codes.Error || sp.SpanKind != trace.SpanKindConsumer {
				t.Errorf("gap span: kind %v, status %v, reason %q, events %v", sp.SpanKind, sp.Status, reason, sp.Events)
			}
			continue
		}
		if sp.Name != "process g" || sp.SpanKind != trace.SpanKindConsumer {
			continue
		}
		attrs := map[string]string{}
		for _, kv := range sp.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
			if strings.Contains(kv.Value.Emit(), telMarker) {
				t.Errorf("span attribute %s holds the marker", kv.Key)
			}
		}
		if strings.Contains(sp.Status.Description, telMarker) {
			t.Errorf("span status holds the marker: %s", sp.Status.Description)
		}
		for _, e := range sp.Events {
			for _, kv := range e.Attributes {
				if strings.Contains(kv.Value.Emit(), telMarker) {
					t.Errorf("span event attribute %s holds the marker", kv.Key)
				}
			}
		}
		if attrs["messaging.system"] != "redis" || attrs["messaging.consumer.group.name"] != "g" ||
			attrs["messaging.operation.type"] != "process" || attrs["messaging.message.id"] == "" ||
			attrs["redcheck.event.type"] == "" {
			t.Errorf("span attributes %v", attrs)
		}
		if attrs["redcheck.event.type"] == "checkpoint" && (attrs["redcheck.thread_id"] != "tel" || attrs["redcheck.checkpoint_id"] == "") {
			t.Errorf("checkpoint event's span attributes %v", attrs)
		}
		if attrs["redcheck.checkpoint_id"] == ids[0] {
			failed++
			if sp.Status.Code != codes.Error || attrs["error.type"] != "handler_error" {
				t.Errorf("failed handling: status %v, error.type %q", sp.Status, attrs["error.type"])
			}
		} else if sp.Status.Code != codes.Error {
			ok++
		}
	}
	if gaps != 1 {
		t.Errorf("%d gap spans, want 1", gaps)
	}
	if failed != 2 || ok < 2 {
		t.Errorf("%d failed and %d successful handling spans, want 2 and at least 2", failed, ok)
	}
	must(t, reader.Collect(ctx, &rm))
	if n := sumOf(rm, "redcheck.consumer.dead_letters", "messaging.consumer.group.name", "g"); n != 1 {
		t.Errorf("dead letters %d, want 1", n)
	}
	if n := sumOf(rm, "redcheck.consumer.redeliveries", "messaging.consumer.group.name", "g"); n != 1 {
		t.Errorf("redeliveries %d, want 1 (the failed event's second handling)", n)
	}
	if n := sumOf(rm, "messaging.client.consumed.messages", "error.type", "handler_error"); n != 2 {
		t.Errorf("consumed messages with error.type handler_error: %d, want 2", n)
	}
	if n := sumOf(rm, "messaging.client.consumed.messages", "error.type", ""); n < 2 {
		t.Errorf("consumed messages handled: %d, want at least 2", n)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "messaging.process.duration" {
				h := m.Data.(metricdata.Histogram[float64])
				var n uint64
				for _, p := range h.DataPoints {
					n += p.Count
				}
				if m.Unit != "s" || n < 4 {
					t.Errorf("process duration: unit %q, %d points", m.Unit, n)
				}
			}
		}
	}
}

// sumOf adds the values of an Int64 counter's points whose attribute key
// is value ("": absent).
func sumOf(rm metricdata.ResourceMetrics, name, key, value string) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			s, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, p := range s.DataPoints {
				if v, _ := p.Attributes.Value(attribute.Key(key)); v.AsString() == value {
					n += p.Value
				}
			}
		}
	}
	return n
}

// must fails the test on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
