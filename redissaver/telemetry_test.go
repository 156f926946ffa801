package redissaver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// marker is written as a channel value, a metadata value and a pending
// write: no span, event or metric may ever show it.
const marker = "SECRET-MARKER-42"

// telRig is a saver whose spans and metrics the test reads.
type telRig struct {
	s      *redissaver.Saver
	rdb    redis.UniversalClient
	exp    *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newTelRig(t *testing.T, rdb redis.UniversalClient, opts redissaver.Options) *telRig {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts.TracerProvider, opts.MeterProvider = tp, mp
	return &telRig{s: newSaver(t, rdb, opts), rdb: rdb, exp: exp, reader: reader}
}

// spans returns the spans ended so far, and forgets them.
func (r *telRig) spans() tracetest.SpanStubs {
	out := r.exp.GetSpans()
	r.exp.Reset()
	return out
}

// metrics collects the metrics.
func (r *telRig) metrics(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// only returns the one span of spans, failing unless there is exactly one
// and it is named name.
func only(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	if len(spans) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%s: %d spans %v, want 1", name, len(spans), names)
	}
	if spans[0].Name != name {
		t.Fatalf("span %q, want %q", spans[0].Name, name)
	}
	return spans[0]
}

func attrOf(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// wantAttrs fails for each attribute of want (values formatted with
// Value.Emit) the span lacks or has another value of; a want of "*" asks
// for the attribute with any value, "-" for its absence.
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	for k, w := range want {
		v, ok := attrOf(s, k)
		switch {
		case w == "-" && ok:
			t.Errorf("%s: attribute %s = %s, want none", s.Name, k, v.Emit())
		case w == "-":
		case !ok:
			t.Errorf("%s: no attribute %s (want %s)", s.Name, k, w)
		case w != "*" && v.Emit() != w:
			t.Errorf("%s: attribute %s = %s, want %s", s.Name, k, v.Emit(), w)
		}
	}
}

// wantOK checks a span of a call that succeeded: kind client, the database
// attributes of op and script, and no error status.
func wantOK(t *testing.T, s tracetest.SpanStub, op, script string) {
	t.Helper()
	if s.SpanKind != trace.SpanKindClient {
		t.Errorf("%s: kind %v, want client", s.Name, s.SpanKind)
	}
	if s.Status.Code == codes.Error {
		t.Errorf("%s: status %v %q, want unset", s.Name, s.Status.Code, s.Status.Description)
	}
	want := map[string]string{"db.system.name": "redis", "db.operation.name": op, "error.type": "-",
		"server.address": "*", "server.port": "*", "redcheck.round_trips": "*"}
	if script == "" {
		want["db.stored_procedure.name"] = "-"
	} else {
		want["db.stored_procedure.name"] = script
	}
	wantAttrs(t, s, want)
	if v, _ := attrOf(s, "redcheck.round_trips"); v.AsInt64() < 1 && op != "DeltaChannelHistory" {
		t.Errorf("%s: %d round trips", s.Name, v.AsInt64())
	}
}

// putOne puts a checkpoint on cfg (its parent) with a channel value and
// metadata holding marker, and the step given.
func putOne(t *testing.T, s *redissaver.Saver, cfg checkpoint.Config, step int) checkpoint.Config {
	t.Helper()
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
		ChannelValues:   map[string]any{"msgs": []any{marker, step}, "plain": "p"},
		ChannelVersions: map[string]string{"msgs": fmt.Sprint(step + 1), "plain": "1"}}
	next, err := s.Put(context.Background(), cfg, cp, checkpoint.Metadata{"step": step, "note": marker, "source": "loop", "run_id": "run-1"},
		map[string]string{"msgs": fmt.Sprint(step + 1), "plain": "1"})
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func TestTelemetryPutWritesGetTuple(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newTelRig(t, b.client(t), redissaver.Options{})
			ctx := context.Background()
			cfg := putOne(t, r.s, checkpoint.Config{ThreadID: "th-1", CheckpointNS: "ns"}, 3)
			put := only(t, r.spans(), "Put")
			wantOK(t, put, "Put", "put.lua")
			wantAttrs(t, put, map[string]string{"redcheck.thread_id": "th-1", "gen_ai.conversation.id": "th-1",
				"redcheck.checkpoint_ns": "ns", "redcheck.checkpoint_id": cfg.CheckpointID, "redcheck.step": "3",
				"redcheck.round_trips": "1", "redcheck.steps": "1"})

			if err := r.s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msgs", Value: marker}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
			pw := only(t, r.spans(), "PutWrites")
			wantOK(t, pw, "PutWrites", "put_writes.lua")
			wantAttrs(t, pw, map[string]string{"redcheck.thread_id": "th-1", "redcheck.checkpoint_ns": "ns",
				"redcheck.checkpoint_id": cfg.CheckpointID, "redcheck.round_trips": "1"})

			latest := checkpoint.Config{ThreadID: "th-1", CheckpointNS: "ns"}
			if _, err := r.s.GetTuple(ctx, latest); err != nil {
				t.Fatal(err)
			}
			get := only(t, r.spans(), "GetTuple")
			wantOK(t, get, "GetTuple", "get_tuple.lua")
			wantAttrs(t, get, map[string]string{"redcheck.thread_id": "th-1", "redcheck.checkpoint_ns": "ns",
				"redcheck.checkpoint_id": cfg.CheckpointID, "redcheck.step": "3", "redcheck.found": "true"})

			// A miss is an answer, not a failure.
			if _, err := r.s.GetTuple(ctx, checkpoint.Config{ThreadID: "nobody"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("GetTuple of an unknown thread: %v", err)
			}
			miss := only(t, r.spans(), "GetTuple")
			wantOK(t, miss, "GetTuple", "get_tuple.lua")
			wantAttrs(t, miss, map[string]string{"redcheck.found": "false", "redcheck.checkpoint_id": "-"})
			if len(miss.Events) != 0 {
				t.Errorf("a miss recorded events %v", miss.Events)
			}
		})
	}
}

// TestTelemetryEveryOperation runs each public operation once and checks
// its one span.
func TestTelemetryEveryOperation(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newTelRig(t, b.client(t), redissaver.Options{PageSize: 2})
			ctx := context.Background()
			cfg := checkpoint.Config{ThreadID: "src", CheckpointNS: ""}
			for i := range 5 {
				cfg = putOne(t, r.s, cfg, i)
				must(t, r.s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msgs", Value: marker}}, "task", ""))
			}
			putOne(t, r.s, checkpoint.Config{ThreadID: "doomed"}, 0)
			r.spans()
			check := func(op, script string, want map[string]string) tracetest.SpanStub {
				t.Helper()
				s := only(t, r.spans(), op)
				wantOK(t, s, op, script)
				wantAttrs(t, s, want)
				noMarker(t, s)
				return s
			}

			n := 0
			for _, err := range r.s.List(ctx, checkpoint.ListQuery{ThreadID: "src"}) {
				must(t, err)
				n++
			}
			check("List", "list.lua", map[string]string{"redcheck.thread_id": "src", "redcheck.checkpoint_ns": "",
				"redcheck.tuples": fmt.Sprint(n), "redcheck.pages": "3", "redcheck.round_trips": "3", "redcheck.steps": "3"})
			for _, err := range r.s.List(ctx, checkpoint.ListQuery{Limit: 3}) { // every thread: merged over 16 shards
				must(t, err)
			}
			s := check("List", "list.lua", map[string]string{"redcheck.thread_id": "-", "redcheck.tuples": "3", "redcheck.pages": "*"})
			if v, _ := attrOf(s, "redcheck.steps"); v.AsInt64() < 16 {
				t.Errorf("a merged List ran %d scripts, want at least one per shard", v.AsInt64())
			}
			// A caller that stops early ends the span.
			for range r.s.List(ctx, checkpoint.ListQuery{ThreadID: "src"}) {
				break
			}
			check("List", "list.lua", map[string]string{"redcheck.tuples": "1", "redcheck.pages": "1"})

			if _, err := r.s.DeltaChannelHistory(ctx, cfg, []string{"msgs", "plain"}); err != nil {
				t.Fatal(err)
			}
			check("DeltaChannelHistory", "delta_history.lua", map[string]string{"redcheck.thread_id": "src",
				"redcheck.checkpoint_id": cfg.CheckpointID, "redcheck.channel_count": "2"})

			must(t, r.s.CopyThread(ctx, "src", "copy"))
			s = check("CopyThread", "", map[string]string{"redcheck.thread_id": "src", "redcheck.target_thread_id": "copy"})
			if v, _ := attrOf(s, "redcheck.steps"); v.AsInt64() < 4 {
				t.Errorf("CopyThread: %d steps", v.AsInt64())
			}

			must(t, r.s.Prune(ctx, []string{"copy"}, checkpoint.PruneKeepLatest))
			check("Prune", "prune.lua", map[string]string{"redcheck.thread_id": "copy", "redcheck.thread_count": "1",
				"redcheck.prune_strategy": string(checkpoint.PruneKeepLatest)})

			must(t, r.s.DeleteForRuns(ctx, []string{"nothing-of-that-run", "another"}))
			check("DeleteForRuns", "delete_runs.lua", map[string]string{"redcheck.run_count": "2", "redcheck.thread_id": "-"})

			must(t, r.s.DeleteThread(ctx, "copy"))
			check("DeleteThread", "delete_thread.lua", map[string]string{"redcheck.thread_id": "copy"})

			// PruneDelete deletes in Prune's span: no DeleteThread span.
			must(t, r.s.Prune(ctx, []string{"doomed", "nobody"}, checkpoint.PruneDelete))
			check("Prune", "prune.lua", map[string]string{"redcheck.thread_id": "-", "redcheck.thread_count": "2"})

			if _, err := r.s.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			check("Sweep", "sweep.lua", map[string]string{"redcheck.units": "*", "redcheck.steps": "*"})

			res, err := r.s.Verify(ctx, "src")
			must(t, err)
			check("Verify", "", map[string]string{"redcheck.thread_id": "src", "redcheck.violations": "0",
				"redcheck.checkpoints": fmt.Sprint(res.Checkpoints)})

			if _, err := r.s.Reinitialize(ctx); err != nil {
				t.Fatal(err)
			}
			check("Reinitialize", "", map[string]string{"redcheck.reset": "false"})

			must(t, r.s.LoadScripts(ctx))
			check("LoadScripts", "", nil)

			// One step per shard, in one round trip.
			must(t, r.s.DeleteForRuns(ctx, []string{"run-1"}))
			check("DeleteForRuns", "delete_runs.lua", map[string]string{"redcheck.steps": "16", "redcheck.round_trips": "1"})

			// Every operation has its duration, with no error.
			h := histogram(t, r.metrics(t))
			for _, op := range []string{"Put", "PutWrites", "List", "DeltaChannelHistory", "CopyThread", "Prune",
				"DeleteForRuns", "DeleteThread", "Sweep", "Verify", "Reinitialize", "LoadScripts"} {
				if n := h.count(op, ""); n == 0 {
					t.Errorf("no duration of %s", op)
				}
			}
			if n := h.count("List", ""); n != 3 {
				t.Errorf("%d List durations, want 3", n)
			}
		})
	}
}

// TestTelemetryDataLoss loses a checkpoint's hash: the GetTuple that finds
// its index entry without it fails with ErrDataLoss, which its span
// records as an error of kind data_loss.
func TestTelemetryDataLoss(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newTelRig(t, b.client(t), redissaver.Options{})
			ctx := context.Background()
			cfg := putOne(t, r.s, checkpoint.Config{ThreadID: "th-lost"}, 0)
			l := keys.Of(r.s)
			gen, err := r.rdb.HGet(ctx, l.Head("th-lost"), "g").Result()
			if err != nil {
				t.Fatal(err)
			}
			must(t, r.rdb.Del(ctx, l.Checkpoint("th-lost", gen, "", cfg.CheckpointID)).Err())
			r.spans()
			_, err = r.s.GetTuple(ctx, cfg)
			if !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Fatalf("GetTuple of a lost checkpoint: %v, want ErrDataLoss", err)
			}
			s := only(t, r.spans(), "GetTuple")
			wantAttrs(t, s, map[string]string{"error.type": "data_loss", "redcheck.thread_id": "th-lost",
				"redcheck.checkpoint_id": cfg.CheckpointID, "redcheck.found": "-"})
			if s.Status.Code != codes.Error || s.Status.Description != err.Error() {
				t.Errorf("status %v %q, want Error %q", s.Status.Code, s.Status.Description, err)
			}
			if !recordedError(s, err.Error()) {
				t.Errorf("no exception event with %q: %v", err, s.Events)
			}

			// Verify finds the loss too: each violation is a detection.
			res, err := r.s.Verify(ctx, "th-lost")
			must(t, err)
			if len(res.Violations) == 0 {
				t.Fatal("Verify found nothing")
			}
			rm := r.metrics(t)
			h := histogram(t, rm)
			if n := h.count("GetTuple", "data_loss"); n != 1 {
				t.Errorf("%d GetTuple durations with error.type data_loss, want 1", n)
			}
			loss := counter(t, rm, "redcheck.client.data_loss")
			if n := loss.sum(map[string]string{"db.operation.name": "GetTuple", "error.type": "data_loss"}); n != 1 {
				t.Errorf("data_loss of GetTuple %d, want 1 (%v)", n, loss)
			}
			if n := loss.sum(map[string]string{"db.operation.name": "Verify"}); n != int64(len(res.Violations)) {
				t.Errorf("data_loss of Verify %d, want %d (%v)", n, len(res.Violations), res.Violations)
			}
		})
	}
}

// TestTelemetryMetrics checks the duration of calls that succeed, miss and
// fail, and the refused writes, and that no metric attribute names a
// thread.
func TestTelemetryMetrics(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newTelRig(t, b.client(t), redissaver.Options{})
			ctx := context.Background()
			cfg := putOne(t, r.s, checkpoint.Config{ThreadID: "th-m"}, 0)
			must(t, r.s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msgs", Value: 1}}, "task", ""))
			if _, err := r.s.GetTuple(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			if _, err := r.s.GetTuple(ctx, checkpoint.Config{ThreadID: "nobody"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatal(err)
			}
			bad := checkpoint.Checkpoint{V: 4, ID: "bad id with spaces", TS: "ts"}
			if _, err := r.s.Put(ctx, cfg, bad, nil, nil); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
				t.Fatalf("Put of a bad id: %v", err)
			}
			if err := r.s.PutWrites(ctx, checkpoint.Config{ThreadID: "th-m"}, []checkpoint.Write{{Channel: "c", Value: 1}}, "t", ""); !errors.Is(err, checkpoint.ErrInvalidConfig) {
				t.Fatalf("PutWrites without a checkpoint id: %v", err)
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := r.s.Put(cancelled, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts"}, nil, nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("Put with a cancelled context: %v", err)
			}

			rm := r.metrics(t)
			h := histogram(t, rm)
			if h.unit != "s" {
				t.Errorf("duration unit %q, want s", h.unit)
			}
			for _, w := range []struct {
				op, kind string
				n        uint64
			}{{"Put", "", 1}, {"Put", "invalid_checkpoint", 1}, {"Put", "canceled", 1}, {"PutWrites", "", 1},
				{"PutWrites", "invalid_config", 1}, {"GetTuple", "", 2}, {"GetTuple", "not_found", 0}} {
				if n := h.count(w.op, w.kind); n != w.n {
					t.Errorf("%s durations with error.type %q: %d, want %d", w.op, w.kind, n, w.n)
				}
			}
			refused := counter(t, rm, "redcheck.client.refused_writes")
			for _, w := range []struct {
				op, kind string
				n        int64
			}{{"Put", "invalid_checkpoint", 1}, {"PutWrites", "invalid_config", 1}, {"Put", "canceled", 0}} {
				if n := refused.sum(map[string]string{"db.operation.name": w.op, "error.type": w.kind}); n != w.n {
					t.Errorf("refused %s writes of %s: %d, want %d", w.op, w.kind, n, w.n)
				}
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					for _, set := range pointAttrs(m) {
						for _, k := range []attribute.Key{"redcheck.thread_id", "gen_ai.conversation.id", "redcheck.checkpoint_id", "redcheck.checkpoint_ns"} {
							if set.HasValue(k) {
								t.Errorf("metric %s has attribute %s", m.Name, k)
							}
						}
					}
				}
			}
		})
	}
}

// durations is the duration histogram's data points.
type durations struct {
	unit   string
	points []metricdata.HistogramDataPoint[float64]
}

// histogram finds db.client.operation.duration.
func histogram(t *testing.T, rm metricdata.ResourceMetrics) durations {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "db.client.operation.duration" {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("duration of %T", m.Data)
			}
			return durations{unit: m.Unit, points: h.DataPoints}
		}
	}
	t.Fatal("no db.client.operation.duration")
	return durations{}
}

// count is the number of durations of op with error.type kind ("": none).
func (d durations) count(op, kind string) uint64 {
	var n uint64
	for _, p := range d.points {
		o, _ := p.Attributes.Value("db.operation.name")
		k, _ := p.Attributes.Value("error.type")
		if s, _ := p.Attributes.Value("db.system.name"); s.AsString() != "redis" {
			continue
		}
		if o.AsString() == op && k.AsString() == kind {
			n += p.Count
		}
	}
	return n
}

// points is an Int64 counter's data points.
type points []metricdata.DataPoint[int64]

func counter(t *testing.T, rm metricdata.ResourceMetrics, name string) points {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				s, ok := m.Data.(metricdata.Sum[int64])
				if !ok || !s.IsMonotonic {
					t.Fatalf("%s of %T, want a monotonic Int64 sum", name, m.Data)
				}
				return s.DataPoints
			}
		}
	}
	return nil
}

// sum adds the points whose attributes include want.
func (ps points) sum(want map[string]string) int64 {
	var n int64
next:
	for _, p := range ps {
		for k, w := range want {
			if v, _ := p.Attributes.Value(attribute.Key(k)); v.AsString() != w {
				continue next
			}
		}
		n += p.Value
	}
	return n
}

// recordedError reports whether the span has an exception event with msg.
func recordedError(s tracetest.SpanStub, msg string) bool {
	for _, e := range s.Events {
		if e.Name != "exception" {
			continue
		}
		for _, kv := range e.Attributes {
			if kv.Key == "exception.message" && kv.Value.AsString() == msg {
				return true
			}
		}
	}
	return false
}

// TestTelemetryCarriesNoData writes marker as a channel value, a metadata
// value and a pending write, runs the operations, some refused for a value
// (their messages quote it), and finds marker in no span name, attribute,
// event or status, and no metric attribute.
func TestTelemetryCarriesNoData(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newTelRig(t, b.client(t), redissaver.Options{})
			ctx := context.Background()
			cfg := putOne(t, r.s, checkpoint.Config{ThreadID: "th-data"}, 0)
			must(t, r.s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msgs", Value: marker}, {Channel: "x", Value: map[string]any{"k": marker}}}, "task", ""))
			cfg = putOne(t, r.s, cfg, 1)
			if _, err := r.s.GetTuple(ctx, checkpoint.Config{ThreadID: "th-data"}); err != nil {
				t.Fatal(err)
			}
			// Refused: a step that quotes the marker, a value the serializer
			// refuses.
			bad := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts"}
			if _, err := r.s.Put(ctx, cfg, bad, checkpoint.Metadata{"step": marker}, nil); !strings.Contains(fmt.Sprint(err), marker) {
				t.Fatalf("Put of step %q: %v, want an error quoting it", marker, err)
			}
			if err := r.s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "c", Value: func() string { return marker }}}, "t2", ""); err == nil {
				t.Fatal("PutWrites of a func: nil error")
			}
			spans := r.spans()
			if len(spans) < 6 {
				t.Fatalf("%d spans", len(spans))
			}
			for _, s := range spans {
				noMarker(t, s)
			}
			noMarkerInMetrics(t, r.metrics(t))
		})
	}
}

// noMarker fails if marker is anywhere in the span.
func noMarker(t *testing.T, s tracetest.SpanStub) {
	t.Helper()
	check := func(where, text string) {
		if strings.Contains(text, marker) {
			t.Errorf("span %s: %s holds the marker: %s", s.Name, where, text)
		}
	}
	check("the name", s.Name)
	check("the status", s.Status.Description)
	for _, kv := range s.Attributes {
		check("attribute "+string(kv.Key), string(kv.Key)+"="+kv.Value.Emit())
	}
	for _, e := range s.Events {
		check("an event's name", e.Name)
		for _, kv := range e.Attributes {
			check("event attribute "+string(kv.Key), string(kv.Key)+"="+kv.Value.Emit())
		}
	}
	for _, l := range s.Links {
		for _, kv := range l.Attributes {
			check("link attribute "+string(kv.Key), string(kv.Key)+"="+kv.Value.Emit())
		}
	}
}

// noMarkerInMetrics fails if marker is in a metric's name or any data
// point's attributes.
func noMarkerInMetrics(t *testing.T, rm metricdata.ResourceMetrics) {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if strings.Contains(m.Name+m.Description, marker) {
				t.Errorf("metric %s holds the marker", m.Name)
			}
			for _, set := range pointAttrs(m) {
				for _, kv := range set.ToSlice() {
					if strings.Contains(string(kv.Key)+"="+kv.Value.Emit(), marker) {
						t.Errorf("metric %s: attribute %s=%s holds the marker", m.Name, kv.Key, kv.Value.Emit())
					}
				}
			}
		}
	}
}

// pointAttrs returns the attribute sets of a metric's data points.
func pointAttrs(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// logRecords decodes the JSON records of a slog.JSONHandler.
func logRecords(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	buf.Reset()
	return out
}

// wantRecord checks that recs is one record of level with the fields of
// want ("*": any value).
func wantRecord(t *testing.T, recs []map[string]any, level string, want map[string]string) {
	t.Helper()
	if len(recs) != 1 {
		t.Fatalf("%d log records %v, want 1", len(recs), recs)
	}
	rec := recs[0]
	if rec["level"] != level {
		t.Errorf("level %v, want %s: %v", rec["level"], level, rec)
	}
	for k, w := range want {
		v, ok := rec[k]
		if !ok || (w != "*" && fmt.Sprint(v) != w) {
			t.Errorf("log field %s = %v, want %s: %v", k, v, w, rec)
		}
	}
}

// TestTelemetryLogs: with a Logger, a data loss is logged at Warn, a
// prefix reset at Error, with the call's attributes; nothing else is
// logged, and no record quotes a value.
func TestTelemetryLogs(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			r := newTelRig(t, b.client(t), redissaver.Options{Logger: logger})
			ctx := context.Background()
			cfg := putOne(t, r.s, checkpoint.Config{ThreadID: "th-log", CheckpointNS: "sub"}, 0)
			must(t, r.s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msgs", Value: marker}}, "task", ""))
			if _, err := r.s.GetTuple(ctx, checkpoint.Config{ThreadID: "nobody"}); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatal(err)
			}
			if _, err := r.s.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, checkpoint.Metadata{"step": marker}, nil); err == nil {
				t.Fatal("a step of a string: nil error")
			}
			for _, err := range r.s.List(ctx, checkpoint.ListQuery{ThreadID: "th-log"}) {
				must(t, err)
			}
			if recs := logRecords(t, &buf); len(recs) != 0 {
				t.Fatalf("logged %v, want nothing", recs)
			}

			l := keys.Of(r.s)
			gen, err := r.rdb.HGet(ctx, l.Head("th-log"), "g").Result()
			must(t, err)
			must(t, r.rdb.Del(ctx, l.Checkpoint("th-log", gen, "sub", cfg.CheckpointID)).Err())
			_, err = r.s.GetTuple(ctx, cfg)
			if !errors.Is(err, checkpoint.ErrDataLoss) {
				t.Fatalf("GetTuple of a lost checkpoint: %v", err)
			}
			spans := r.spans()
			get := spans[len(spans)-1]
			wantRecord(t, logRecords(t, &buf), "WARN", map[string]string{"db.operation.name": "GetTuple",
				"redcheck.thread_id": "th-log", "redcheck.checkpoint_ns": "sub", "redcheck.checkpoint_id": cfg.CheckpointID,
				"error.type": "data_loss", "error": err.Error(), "redcheck.prefix": "*",
				"trace_id": get.SpanContext.TraceID().String(), "span_id": get.SpanContext.SpanID().String()})
		})
	}
}

// TestTelemetryPrefixResetLogged: a prefix emptied is logged at Error, by
// the call that finds it and by Reinitialize, and counted as lost data and
// a refused write.
func TestTelemetryPrefixResetLogged(t *testing.T) {
	rdb := redistest.Real(t)
	ctx := context.Background()
	var buf bytes.Buffer
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	prefix := redistest.Prefix(t)
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, Shards: 2, TracerProvider: tp, MeterProvider: mp,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	must(t, err)
	r := &telRig{s: s, rdb: rdb, exp: exp, reader: reader}
	empty := func() {
		t.Helper()
		ks, err := rdb.Keys(ctx, prefix+"*").Result()
		must(t, err)
		if len(ks) > 0 {
			must(t, rdb.Del(ctx, ks...).Err())
		}
	}
	cfg := putOne(t, s, checkpoint.Config{ThreadID: "th-reset"}, 0)

	empty()
	reset, err := s.Reinitialize(ctx)
	if err != nil || !reset {
		t.Fatalf("Reinitialize of an emptied prefix: %v, %v", reset, err)
	}
	wantRecord(t, logRecords(t, &buf), "ERROR", map[string]string{"db.operation.name": "Reinitialize",
		"error.type": "prefix_reset", "redcheck.prefix": prefix})

	empty()
	_, err = s.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts"}, nil, nil)
	if !errors.Is(err, redissaver.ErrPrefixReset) {
		t.Fatalf("Put into an emptied prefix: %v, want ErrPrefixReset", err)
	}
	wantRecord(t, logRecords(t, &buf), "ERROR", map[string]string{"db.operation.name": "Put",
		"error.type": "prefix_reset", "redcheck.thread_id": "th-reset", "error": err.Error()})
	spans := r.spans()
	put := spans[len(spans)-1]
	wantAttrs(t, put, map[string]string{"error.type": "prefix_reset"})
	if put.Status.Code != codes.Error {
		t.Errorf("Put status %v", put.Status)
	}
	rm := r.metrics(t)
	if n := counter(t, rm, "redcheck.client.data_loss").sum(map[string]string{"db.operation.name": "Put", "error.type": "prefix_reset"}); n != 1 {
		t.Errorf("data_loss of Put's prefix reset: %d, want 1", n)
	}
	if n := counter(t, rm, "redcheck.client.refused_writes").sum(map[string]string{"error.type": "prefix_reset"}); n != 1 {
		t.Errorf("refused_writes of prefix_reset: %d, want 1", n)
	}
}
