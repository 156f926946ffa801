package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telRig is a store reporting to the SDK's in-memory exporter, a manual
// metric reader and a text log.
type telRig struct {
	s      *redisstore.Store
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	logs   *bytes.Buffer
	prefix string
}

func newTelRig(t *testing.T, rdb redis.UniversalClient, opts redisstore.Options) *telRig {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	var logs bytes.Buffer
	opts.Prefix = redistest.Prefix(t)
	opts.TracerProvider, opts.MeterProvider = tp, mp
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s, err := redisstore.New(context.Background(), rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &telRig{s: s, spans: exp, reader: reader, logs: &logs, prefix: opts.Prefix}
}

func (r *telRig) metrics(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func spanAttrs(sp tracetest.SpanStub) map[string]attribute.Value {
	out := map[string]attribute.Value{}
	for _, kv := range sp.Attributes {
		out[string(kv.Key)] = kv.Value
	}
	return out
}

// TestStoreTelemetry: each public operation of the store is one client
// span with the database conventions' attributes, the namespace and key it
// addresses, its round trips and bytes; a Get that finds nothing is no
// failure; the duration histogram has a point per call and the bytes
// counters count what went and came, with no namespace or key among
// their attributes.
func TestStoreTelemetry(t *testing.T) {
	for _, tier := range []struct {
		name string
		rdb  func(t *testing.T) *redis.Client
	}{
		{"miniredis", func(t *testing.T) *redis.Client { _, c := redistest.Mini(t); return c }},
		{"redis", func(t *testing.T) *redis.Client { return redistest.Real(t) }},
	} {
		t.Run(tier.name, func(t *testing.T) {
			emb, err := embed.NewHashing(16)
			if err != nil {
				t.Fatal(err)
			}
			r := newTelRig(t, tier.rdb(t), redisstore.Options{Embedder: emb, Dims: 16})
			ctx := context.Background()
			ns := []string{"users", "u-1"}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(r.s.LoadScripts(ctx))
			must(r.s.Put(ctx, ns, "pref", map[string]any{"text": "likes tea"}))
			if _, err := r.s.Get(ctx, ns, "pref"); err != nil {
				t.Fatal(err)
			}
			if _, err := r.s.Get(ctx, ns, "nothing"); !errors.Is(err, redisstore.ErrNotFound) {
				t.Fatalf("Get of nothing: %v", err)
			}
			found, err := r.s.Search(ctx, []string{"users"}, redisstore.SearchOptions{Query: "tea", Filter: map[string]any{"text": "likes tea"}})
			must(err)
			if len(found) != 1 {
				t.Fatalf("Search found %d", len(found))
			}
			nss, err := r.s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Prefix: []string{"users"}})
			must(err)
			if len(nss) != 1 {
				t.Fatalf("ListNamespaces found %v", nss)
			}
			_, err = r.s.Batch(ctx, []redisstore.Op{redisstore.GetOp{Namespace: ns, Key: "pref"}, redisstore.PutOp{Namespace: ns, Key: "b", Value: map[string]any{"x": 1}}})
			must(err)
			must(r.s.Delete(ctx, ns, "b"))
			_, err = r.s.Sweep(ctx)
			must(err)
			if err := r.s.Put(ctx, nil, "k", map[string]any{}); !errors.Is(err, redisstore.ErrInvalidNamespace) {
				t.Fatalf("Put without a namespace: %v", err)
			}

			byName := map[string][]tracetest.SpanStub{}
			for _, sp := range r.spans.GetSpans() {
				byName[sp.Name] = append(byName[sp.Name], sp)
				a := spanAttrs(sp)
				if sp.SpanKind != trace.SpanKindClient || a["db.system.name"].AsString() != "redis" || a["db.operation.name"].AsString() != sp.Name ||
					a["redcheck.prefix"].AsString() != r.prefix || a["server.address"].AsString() == "" {
					t.Errorf("span %s: kind %v, attributes %v", sp.Name, sp.SpanKind, a)
				}
				if sp.InstrumentationScope.Name != "github.com/graphstate/redcheck/redisstore" {
					t.Errorf("span %s: scope %q", sp.Name, sp.InstrumentationScope.Name)
				}
			}
			want := map[string]int{"StoreLoadScripts": 1, "StorePut": 2, "StoreGet": 2, "StoreSearch": 1, "StoreListNamespaces": 1,
				"StoreBatch": 1, "StoreDelete": 1, "StoreSweep": 1}
			for name, n := range want {
				if len(byName[name]) != n {
					t.Errorf("%d %s spans, want %d", len(byName[name]), name, n)
				}
			}
			if len(byName) != len(want) {
				t.Errorf("span names %v, want %v", byName, want)
			}
			put := spanAttrs(byName["StorePut"][0])
			if got := put["redcheck.store.namespace"].AsStringSlice(); strings.Join(got, "/") != "users/u-1" || put["redcheck.store.key"].AsString() != "pref" ||
				put["db.stored_procedure.name"].AsString() != "store_write.lua" || put["redcheck.round_trips"].AsInt64() != 1 ||
				put["redcheck.store.bytes_written"].AsInt64() <= int64(len(`{"text":"likes tea"}`)) {
				t.Errorf("StorePut attributes %v", put)
			}
			if g := spanAttrs(byName["StoreGet"][0]); !g["redcheck.found"].AsBool() || g["redcheck.store.bytes_read"].AsInt64() != int64(len(`{"text":"likes tea"}`)) {
				t.Errorf("StoreGet attributes %v", g)
			}
			miss := byName["StoreGet"][1]
			if a := spanAttrs(miss); a["redcheck.found"].AsBool() || miss.Status.Code == codes.Error || a["error.type"].Type() != attribute.INVALID {
				t.Errorf("a Get of nothing: status %v, attributes %v", miss.Status, a)
			}
			if a := spanAttrs(byName["StoreSearch"][0]); !a["redcheck.store.query"].AsBool() || !a["redcheck.store.filter"].AsBool() || a["redcheck.store.items"].AsInt64() != 1 {
				t.Errorf("StoreSearch attributes %v", a)
			}
			if a := spanAttrs(byName["StoreBatch"][0]); a["redcheck.store.op_count"].AsInt64() != 2 {
				t.Errorf("StoreBatch attributes %v", a)
			}
			bad := byName["StorePut"][1]
			if a := spanAttrs(bad); bad.Status.Code != codes.Error || a["error.type"].AsString() != "invalid_namespace" || a["redcheck.round_trips"].AsInt64() != 0 {
				t.Errorf("a refused Put: status %v, attributes %v", bad.Status, a)
			}

			rm := r.metrics(t)
			points := map[string]int{}
			var written, read int64
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					switch d := m.Data.(type) {
					case metricdata.Histogram[float64]:
						for _, p := range d.DataPoints {
							op, _ := p.Attributes.Value("db.operation.name")
							points[op.AsString()] += int(p.Count)
							checkLowCardinality(t, m.Name, p.Attributes)
						}
					case metricdata.Sum[int64]:
						for _, p := range d.DataPoints {
							checkLowCardinality(t, m.Name, p.Attributes)
							switch m.Name {
							case "redcheck.store.written":
								written += p.Value
							case "redcheck.store.read":
								read += p.Value
							}
						}
					}
				}
			}
			for name, n := range want {
				if points[name] != n {
					t.Errorf("db.client.operation.duration: %d points of %s, want %d", points[name], name, n)
				}
			}
			if written == 0 || read == 0 {
				t.Errorf("bytes written %d, read %d: want both counted", written, read)
			}
			if r.logs.Len() != 0 {
				t.Errorf("logs without a data loss: %s", r.logs)
			}
		})
	}
}

// checkLowCardinality fails on a metric attribute that names a namespace
// or a key.
func checkLowCardinality(t *testing.T, metric string, set attribute.Set) {
	t.Helper()
	for _, kv := range set.ToSlice() {
		switch kv.Key {
		case "redcheck.store.namespace", "redcheck.store.key":
			t.Errorf("metric %s has attribute %s", metric, kv.Key)
		}
	}
}

// TestStoreTelemetryDataLoss: a call that meets lost data sets the span's
// error status with error.type data_loss, counts a detection and logs it
// at Warn with the span's trace.
func TestStoreTelemetryDataLoss(t *testing.T) {
	rdb := redistest.Real(t)
	r := newTelRig(t, rdb, redisstore.Options{})
	ctx := context.Background()
	ns := []string{"users", "u-2"}
	if err := r.s.Put(ctx, ns, "k", map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	// The namespace registry, lost whole (evicted).
	if err := rdb.Del(ctx, "{"+r.prefix+"}:ns").Err(); err != nil {
		t.Fatal(err)
	}
	r.spans.Reset()
	if _, err := r.s.Get(ctx, ns, "k"); !errors.Is(err, checkpoint.ErrDataLoss) {
		t.Fatalf("Get after the registry was lost: %v, want ErrDataLoss", err)
	}
	spans := r.spans.GetSpans()
	if len(spans) != 1 || spans[0].Status.Code != codes.Error || spanAttrs(spans[0])["error.type"].AsString() != "data_loss" {
		t.Fatalf("spans %+v", spans)
	}
	var lost int64
	for _, sm := range r.metrics(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "redcheck.client.data_loss" {
				for _, p := range s.DataPoints {
					lost += p.Value
				}
			}
		}
	}
	if lost != 1 {
		t.Errorf("redcheck.client.data_loss = %d, want 1", lost)
	}
	log := r.logs.String()
	for _, want := range []string{"level=WARN", "data loss detected", "db.operation.name=StoreGet", "error.type=data_loss",
		"trace_id=" + spans[0].SpanContext.TraceID().String()} {
		if !strings.Contains(log, want) {
			t.Errorf("log %q lacks %q", log, want)
		}
	}
}
