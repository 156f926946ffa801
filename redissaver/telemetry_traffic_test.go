package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTelemetryTraffic puts a channel value of a known size and reads it
// back: the spans' redcheck.bytes.sent and redcheck.bytes.received, and
// the redcheck.client.written and redcheck.client.read counters, hold at
// least that size and not wildly more (the keys, ids and the event
// around it); redcheck.client.round_trips counts one round trip per Put.
// The metrics carry the operation and no thread.
func TestTelemetryTraffic(t *testing.T) {
	for _, b := range backends {
		for _, size := range []int{1 << 10, 64 << 10} {
			t.Run(fmt.Sprintf("%s/value=%d", b.name, size), func(t *testing.T) {
				r := newTelRig(t, b.client(t), redissaver.Options{})
				ctx := context.Background()
				value := strings.Repeat("v", size)
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
					ChannelValues: map[string]any{"big": value}, ChannelVersions: map[string]string{"big": "1"}}
				cfg, err := r.s.Put(ctx, checkpoint.Config{ThreadID: "th-bytes"}, cp, checkpoint.Metadata{"step": 1}, map[string]string{"big": "1"})
				must(t, err)
				put := only(t, r.spans(), "Put")
				wantAttrs(t, put, map[string]string{"redcheck.round_trips": "1"})
				sent := spanInt(t, put, "redcheck.bytes.sent")
				if sent < int64(size) || sent > 3*int64(size)+4096 {
					t.Errorf("Put of a %d-byte value: redcheck.bytes.sent %d", size, sent)
				}

				if _, err := r.s.GetTuple(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				get := only(t, r.spans(), "GetTuple")
				received := spanInt(t, get, "redcheck.bytes.received")
				if received < int64(size) || received > 3*int64(size)+4096 {
					t.Errorf("GetTuple of a %d-byte value: redcheck.bytes.received %d", size, received)
				}
				if s := spanInt(t, get, "redcheck.bytes.sent"); s <= 0 || s >= int64(size) {
					t.Errorf("GetTuple sent %d bytes (its keys and ids), want some and less than the value", s)
				}

				rm := r.metrics(t)
				for _, w := range []struct {
					metric, op string
					want       int64
				}{{"redcheck.client.written", "Put", sent}, {"redcheck.client.read", "GetTuple", received}} {
					ps := counter(t, rm, w.metric)
					if got := ps.sum(map[string]string{"db.operation.name": w.op}); got != w.want {
						t.Errorf("%s of %s: %d, want the span's %d", w.metric, w.op, got, w.want)
					}
					if unit := unitOf(rm, w.metric); unit != "By" {
						t.Errorf("%s unit %q, want By", w.metric, unit)
					}
				}
				trips, unit := tripsOf(t, rm)
				if unit != "{round_trip}" {
					t.Errorf("round trips unit %q", unit)
				}
				// A large value is read in a round trip of its own
				// (docs/storage-format.md): the histogram holds the span's.
				for op, want := range map[string]int64{"Put": 1, "GetTuple": spanInt(t, get, "redcheck.round_trips")} {
					if p, ok := trips[op]; !ok || p.Count != 1 || p.Sum != want {
						t.Errorf("round trips of %s: count %d sum %d, want one call of %d", op, p.Count, p.Sum, want)
					}
				}
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						for _, set := range pointAttrs(m) {
							if set.HasValue("redcheck.thread_id") || set.HasValue("gen_ai.conversation.id") {
								t.Errorf("metric %s carries a thread", m.Name)
							}
						}
					}
				}
			})
		}
	}
}

// spanInt is an integer attribute of s, failing when it is missing.
func spanInt(t *testing.T, s tracetest.SpanStub, key string) int64 {
	t.Helper()
	v, ok := attrOf(s, key)
	if !ok || v.Type() != attribute.INT64 {
		t.Fatalf("span %s: %s is %v, want an integer", s.Name, key, v.Emit())
	}
	return v.AsInt64()
}

// unitOf is the unit of the metric named name.
func unitOf(rm metricdata.ResourceMetrics, name string) string {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Unit
			}
		}
	}
	return ""
}

// tripsOf is redcheck.client.round_trips's points by operation, and its
// unit.
func tripsOf(t *testing.T, rm metricdata.ResourceMetrics) (map[string]metricdata.HistogramDataPoint[int64], string) {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "redcheck.client.round_trips" {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[int64])
			if !ok {
				t.Fatalf("round trips of %T", m.Data)
			}
			out := map[string]metricdata.HistogramDataPoint[int64]{}
			for _, p := range h.DataPoints {
				op, _ := p.Attributes.Value(attribute.Key("db.operation.name"))
				out[op.AsString()] = p
			}
			return out, m.Unit
		}
	}
	t.Fatal("no redcheck.client.round_trips")
	return nil, ""
}
