package telemetrycheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// marker is written as every kind of payload: channel values, pending
// writes, metadata values, store item values, search queries and filters,
// and quoted by refused calls' errors, an embedder's and a handler's.
const marker = "PAYLOAD-MARKER-5e1f"

// lockedBuffer is a log destination safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// refusing is the msgpack serializer, refusing values that hold "refuse"
// with an error that quotes them, as a serializer's complaint may.
type refusing struct{ checkpoint.MsgpackSerializer }

func (r refusing) DumpsTyped(v any) (string, []byte, error) {
	if s := fmt.Sprint(v); strings.Contains(s, "refuse") {
		return "", nil, fmt.Errorf("cannot serialize %s", s)
	}
	return r.MsgpackSerializer.DumpsTyped(v)
}

// refusingEmbedder embeds with the hashing embedder, and refuses texts
// that hold "refuse", quoting them.
type refusingEmbedder struct{ *embed.Hashing }

func (r refusingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "refuse") {
			return nil, fmt.Errorf("cannot embed %q", t)
		}
	}
	return r.Hashing.Embed(ctx, texts)
}

// TestNoPayloadInTelemetry runs every public operation of redissaver,
// stream and redisstore with the SDK's in-memory span exporter, a manual
// metric reader and a JSON log, on values that hold a marker (and calls
// refused with errors that quote it), and finds the marker in no span
// name, attribute, event, link or status, no metric's description or
// attributes, and no log record. The marker is in what the calls read
// back, and the logs are not empty: the check looks where it should.
func TestNoPayloadInTelemetry(t *testing.T) {
	for _, tier := range []struct {
		name string
		rdb  func(t *testing.T) *redis.Client
	}{
		{"miniredis", func(t *testing.T) *redis.Client { _, c := redistest.Mini(t); return c }},
		{"redis", func(t *testing.T) *redis.Client { return redistest.Real(t) }},
	} {
		t.Run(tier.name, func(t *testing.T) { noPayload(t, tier.rdb(t)) })
	}
}

func noPayload(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), marker) {
			t.Fatalf("%s: %v, want an error quoting the marker", what, err)
		}
	}

	// ---- redissaver ----
	prefix := redistest.Prefix(t)
	saver, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, Shards: 2, AcceptEviction: true, Serializer: refusing{},
		Events: redissaver.Events{IncludeValues: true}, TracerProvider: tp, MeterProvider: mp, Logger: logger})
	must(err)
	must(saver.LoadScripts(ctx))
	reg, err := saver.RegisterGauges()
	must(err)
	defer func() { _ = reg.Unregister() }()
	values := map[string]any{"msgs": []any{marker}, "doc": map[string]any{"k": marker}, "blob": []byte(marker)}
	versions := map[string]string{"msgs": "1", "doc": "1", "blob": "1"}
	md := checkpoint.Metadata{"step": 0, "note": marker, "deep": map[string]any{"k": []any{marker}}, "run_id": "run-1", "source": "loop"}
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts", ChannelValues: values, ChannelVersions: versions}
	cfg, err := saver.Put(ctx, checkpoint.Config{ThreadID: "th"}, cp, md, versions)
	must(err)
	must(saver.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msgs", Value: marker}, {Channel: checkpoint.ErrorChannel, Value: marker}}, "task", "path"))
	cp2 := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts", ChannelValues: map[string]any{"msgs": []any{marker, marker}},
		ChannelVersions: map[string]string{"msgs": "2", "doc": "1", "blob": "1"}}
	cfg2, err := saver.Put(ctx, cfg, cp2, checkpoint.Metadata{"step": 1, "note": marker, "run_id": "run-1"}, map[string]string{"msgs": "2"})
	must(err)
	tup, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: "th"})
	must(err)
	if !strings.Contains(fmt.Sprint(tup.Checkpoint.ChannelValues, tup.Metadata, tup.PendingWrites), marker) && tup.Metadata["note"] != marker {
		t.Fatal("the marker was not stored")
	}
	for _, err := range saver.List(ctx, checkpoint.ListQuery{ThreadID: "th", Filter: checkpoint.Metadata{"note": marker}}) {
		must(err)
	}
	_, err = saver.DeltaChannelHistory(ctx, cfg2, []string{"msgs"})
	must(err)
	must(saver.CopyThread(ctx, "th", "th-copy"))
	_, err = saver.Verify(ctx, "th")
	must(err)
	// Refused, quoting the marker: a step that is not an integer, values
	// the serializer refuses.
	_, err = saver.Put(ctx, cfg2, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts"}, checkpoint.Metadata{"step": marker}, nil)
	refused("Put with a marker step", err)
	refused("PutWrites of a refused value", saver.PutWrites(ctx, cfg2, []checkpoint.Write{{Channel: "x", Value: "refuse " + marker}}, "t2", ""))
	_, err = saver.Put(ctx, cfg2, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts", ChannelValues: map[string]any{"msgs": "refuse " + marker},
		ChannelVersions: map[string]string{"msgs": "3"}}, checkpoint.Metadata{"step": 2}, map[string]string{"msgs": "3"})
	refused("Put of a refused value", err)

	// ---- stream: Consume (a handler error quoting the marker, moved to
	// the dead-letter stream) and Subscribe ----
	sub, err := stream.New(rdb, stream.Options{Prefix: prefix, Shards: 2, Block: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		TracerProvider: tp, MeterProvider: mp, Logger: logger})
	must(err)
	var mu sync.Mutex
	handled := 0
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sub.Consume(cctx, "g", "c", func(_ context.Context, ev stream.Event) error {
			mu.Lock()
			defer mu.Unlock()
			handled++
			if ev.Type == stream.TypeWrites {
				return errors.New("refused " + marker)
			}
			return nil
		}, stream.ConsumeOptions{Start: stream.FromBeginning, MinIdle: 20 * time.Millisecond, MaxDeliveries: 1, OnError: func(stream.Event, error) {}})
	}()
	sawMarker := false
	for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: "th", From: stream.FromBeginning}) {
		must(err)
		sawMarker = sawMarker || strings.Contains(fmt.Sprint(ev.Values, ev.Writes), marker)
		if ev.Type == stream.TypeWrites {
			break
		}
	}
	if !sawMarker {
		t.Error("the events carry no marker: IncludeValues is not in effect")
	}
	waitFor(t, "a dead letter", func() bool {
		n := int64(0)
		for i := range 2 {
			n += rdb.XLen(ctx, sub.DeadLetter(keys.Of(saver).Feed(i), "g")).Val()
		}
		return n == 1
	})
	cancel()
	<-done

	// The rest of the saver's writes, then a lost key: a data-loss log.
	must(saver.Prune(ctx, []string{"th-copy"}, checkpoint.PruneKeepLatest))
	must(saver.DeleteForRuns(ctx, []string{"run-1"}))
	must(saver.DeleteThread(ctx, "th-copy"))
	_, err = saver.Sweep(ctx)
	must(err)
	_, err = saver.Reinitialize(ctx)
	must(err)
	lostCfg, err := saver.Put(ctx, checkpoint.Config{ThreadID: "lost"}, cp, md, versions)
	must(err)
	l := keys.Of(saver)
	var cpKeys []string
	iter := rdb.Scan(ctx, 0, l.Prefix()+":*t:"+keys.Encode("lost")+":g:*:cp:*", 100).Iterator()
	for iter.Next(ctx) {
		cpKeys = append(cpKeys, iter.Val())
	}
	must(iter.Err())
	if len(cpKeys) != 1 {
		t.Fatalf("checkpoint keys of the thread lost: %q", cpKeys)
	}
	must(rdb.Del(ctx, cpKeys[0]).Err())
	if _, err := saver.GetTuple(ctx, lostCfg); !errors.Is(err, checkpoint.ErrDataLoss) {
		t.Fatalf("GetTuple of a deleted checkpoint hash: %v, want ErrDataLoss", err)
	}

	// ---- redisstore ----
	hashing, err := embed.NewHashing(16)
	must(err)
	store, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: redistest.Prefix(t), Embedder: refusingEmbedder{hashing}, Dims: 16,
		TracerProvider: tp, MeterProvider: mp, Logger: logger})
	must(err)
	must(store.LoadScripts(ctx))
	ns := []string{"users", "u-1"}
	must(store.Put(ctx, ns, "memory", map[string]any{"text": marker, "deep": map[string]any{"k": []any{marker}}}))
	it, err := store.Get(ctx, ns, "memory")
	must(err)
	if it.Value["text"] != marker {
		t.Fatal("the store did not keep the marker")
	}
	_, err = store.Search(ctx, []string{"users"}, redisstore.SearchOptions{Query: marker, Filter: map[string]any{"text": marker}})
	must(err)
	_, err = store.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Prefix: []string{"users"}})
	must(err)
	_, err = store.Batch(ctx, []redisstore.Op{
		redisstore.PutOp{Namespace: ns, Key: "b", Value: map[string]any{"v": marker}},
		redisstore.SearchOp{NamespacePrefix: []string{"users"}, Options: redisstore.SearchOptions{Query: marker}},
		redisstore.GetOp{Namespace: ns, Key: "memory"},
	})
	must(err)
	must(store.Delete(ctx, ns, "b"))
	_, err = store.Sweep(ctx)
	must(err)
	_, err = store.Search(ctx, []string{"users"}, redisstore.SearchOptions{Filter: map[string]any{"text": map[string]any{"$" + marker: 1}}})
	refused("Search with a marker operator", err)
	refused("Put of a text the embedder refuses", store.Put(ctx, ns, "r", map[string]any{"text": "refuse " + marker}))
	_, err = store.Search(ctx, []string{"users"}, redisstore.SearchOptions{Query: "refuse " + marker})
	refused("Search with a query the embedder refuses", err)

	// ---- what was exported ----
	var rm metricdata.ResourceMetrics
	must(reader.Collect(ctx, &rm))
	spans := exp.GetSpans()
	if len(spans) < 30 {
		t.Errorf("%d spans: fewer than the calls made", len(spans))
	}
	names := map[string]bool{}
	for _, sp := range spans {
		names[sp.Name] = true
		var text strings.Builder
		fmt.Fprintf(&text, "%s %s %v", sp.Name, sp.Status.Description, sp.Attributes)
		for _, e := range sp.Events {
			fmt.Fprintf(&text, " %s %v", e.Name, e.Attributes)
		}
		for _, l := range sp.Links {
			fmt.Fprintf(&text, " %v %v", l.SpanContext.TraceState(), l.Attributes)
		}
		if strings.Contains(text.String(), marker) {
			t.Errorf("span %s holds the marker: %s", sp.Name, text.String())
		}
	}
	for _, want := range []string{"Put", "PutWrites", "GetTuple", "List", "DeltaChannelHistory", "CopyThread", "Verify", "Prune", "DeleteForRuns",
		"DeleteThread", "Sweep", "Reinitialize", "LoadScripts", "process g", "receive", "StorePut", "StoreGet", "StoreSearch",
		"StoreListNamespaces", "StoreBatch", "StoreDelete", "StoreSweep", "StoreLoadScripts"} {
		if !names[want] {
			t.Errorf("no %s span was exported", want)
		}
	}
	metrics := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			metrics++
			text := fmt.Sprintf("%s %s %s %s", m.Name, m.Description, m.Unit, metricAttrs(m.Data))
			if strings.Contains(text, marker) {
				t.Errorf("metric %s holds the marker: %s", m.Name, text)
			}
		}
	}
	if metrics < 8 {
		t.Errorf("%d metrics collected: fewer than the instruments used", metrics)
	}
	out := logs.String()
	for _, want := range []string{"data loss detected", "dead-letter stream"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q record among the logs: %s", want, out)
		}
	}
	if strings.Contains(out, marker) {
		t.Errorf("a log record holds the marker: %s", out)
	}
}

// metricAttrs lists the attributes of every data point of a metric.
func metricAttrs(data metricdata.Aggregation) string {
	var b strings.Builder
	switch d := data.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			fmt.Fprintf(&b, "%v;", p.Attributes.ToSlice())
		}
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			fmt.Fprintf(&b, "%v;", p.Attributes.ToSlice())
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			fmt.Fprintf(&b, "%v;", p.Attributes.ToSlice())
		}
	default:
		fmt.Fprintf(&b, "%T?", data)
	}
	return b.String()
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
