package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/dbtel"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// instrumentationName names the store's tracer and meter
// (docs/observability.md).
const instrumentationName = "github.com/graphstate/redcheck/redisstore"

// Attribute keys of the store's own. Namespaces and keys are identifiers
// (as thread ids are): span and log attributes, never metric attributes.
// No attribute ever holds an item's value, a vector, a search query's text
// or a filter.
const (
	attrPrefix     = attribute.Key("redcheck.prefix")
	attrNamespace  = attribute.Key("redcheck.store.namespace")
	attrKey        = attribute.Key("redcheck.store.key")
	attrFound      = attribute.Key("redcheck.found")
	attrItems      = attribute.Key("redcheck.store.items")
	attrOps        = attribute.Key("redcheck.store.op_count")
	attrQuery      = attribute.Key("redcheck.store.query")
	attrFiltered   = attribute.Key("redcheck.store.filter")
	attrLimit      = attribute.Key("redcheck.store.limit")
	attrOffset     = attribute.Key("redcheck.store.offset")
	attrSwept      = attribute.Key("redcheck.store.swept")
	attrRoundTrips = attribute.Key("redcheck.round_trips")
	attrWritten    = attribute.Key("redcheck.store.bytes_written")
	attrRead       = attribute.Key("redcheck.store.bytes_read")
)

// The store's metrics (docs/observability.md, docs/operations.md).
const (
	metricDuration = "db.client.operation.duration"
	metricDataLoss = "redcheck.client.data_loss"
	metricWritten  = "redcheck.store.written"
	metricRead     = "redcheck.store.read"
)

// opKind is a public operation of the store: each call is one span.
type opKind uint8

const (
	opPut opKind = iota
	opDelete
	opGet
	opSearch
	opListNamespaces
	opBatch
	opSweep
	opLoadScripts
	numOps
)

// operations gives each operation its name (the span's and
// db.operation.name) and its main script ("" for several).
var operations = [numOps]struct{ name, script string }{
	opPut:            {"StorePut", "store_write.lua"},
	opDelete:         {"StoreDelete", "store_write.lua"},
	opGet:            {"StoreGet", "store_get.lua"},
	opSearch:         {"StoreSearch", "store_scan.lua"},
	opListNamespaces: {"StoreListNamespaces", "store_list.lua"},
	opBatch:          {"StoreBatch", ""},
	opSweep:          {"StoreSweep", "store_write.lua"},
	opLoadScripts:    {"StoreLoadScripts", ""},
}

// telemetry is what a store reports through, built once by New.
type telemetry struct {
	tracer   trace.Tracer
	start    [numOps][]trace.SpanStartOption
	duration metric.Float64Histogram
	dataLoss metric.Int64Counter
	written  metric.Int64Counter
	read     metric.Int64Counter
	base     [numOps][]attribute.KeyValue
	ok       [numOps]metric.MeasurementOption
	logger   *slog.Logger
	prefix   string
}

func newTelemetry(o Options, rdb redis.UniversalClient) *telemetry {
	tp, mp := o.TracerProvider, o.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := &telemetry{tracer: tp.Tracer(instrumentationName), logger: o.Logger, prefix: o.Prefix}
	meter := mp.Meter(instrumentationName)
	// An instrument the provider refuses is a no-op one, its error handed to
	// otel.Handle: telemetry never fails the store.
	var err error
	if t.duration, err = meter.Float64Histogram(metricDuration, metric.WithUnit("s"),
		metric.WithDescription(dbtel.DurationDescription),
		metric.WithExplicitBucketBoundaries(dbtel.DurationBuckets...)); err != nil {
		otel.Handle(err)
	}
	if t.dataLoss, err = meter.Int64Counter(metricDataLoss, metric.WithUnit("{detection}"),
		metric.WithDescription(dbtel.DataLossDescription)); err != nil {
		otel.Handle(err)
	}
	if t.written, err = meter.Int64Counter(metricWritten, metric.WithUnit("By"),
		metric.WithDescription("Bytes of items (their JSON values and vectors) the store's writes sent.")); err != nil {
		otel.Handle(err)
	}
	if t.read, err = meter.Int64Counter(metricRead, metric.WithUnit("By"),
		metric.WithDescription("Bytes of items (JSON values and vectors) the store's reads received.")); err != nil {
		otel.Handle(err)
	}
	server := dbtel.ServerAttrs(rdb)
	for op := range numOps {
		attrs := []attribute.KeyValue{dbtel.System.String("redis"), dbtel.Operation.String(operations[op].name), attrPrefix.String(o.Prefix)}
		attrs = append(attrs, server...)
		t.base[op] = attrs
		t.ok[op] = metric.WithAttributeSet(attribute.NewSet(attrs...))
		spanAttrs := attrs
		if sc := operations[op].script; sc != "" {
			spanAttrs = append(attrs[:len(attrs):len(attrs)], dbtel.Procedure.String(sc))
		}
		t.start[op] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(spanAttrs...)}
	}
	return t
}

// opCall is one call of a public operation under way.
type opCall struct {
	t     *telemetry
	op    opKind
	ctx   context.Context
	span  trace.Span
	start time.Time
	n     *opCount
	ns    []string
	key   string
}

// opCount is what a call counts, reached from its context by Store.run and
// the code that sends or decodes items.
type opCount struct {
	trips   int
	written int64
	read    int64
}

type countKey struct{}

// begin starts a call of op: its span, child of ctx's, and its counters.
func (s *Store) begin(ctx context.Context, op opKind) (context.Context, *opCall) {
	ctx, span := s.tel.tracer.Start(ctx, operations[op].name, s.tel.start[op]...)
	c := &opCall{t: s.tel, op: op, span: span, start: time.Now(), n: &opCount{}}
	ctx = context.WithValue(ctx, countKey{}, c.n)
	c.ctx = ctx
	return ctx, c
}

func counted(ctx context.Context) *opCount {
	n, _ := ctx.Value(countKey{}).(*opCount)
	return n
}

// sent counts a round trip of ctx's call.
func sent(ctx context.Context) {
	if n := counted(ctx); n != nil {
		n.trips++
	}
}

// wrote counts bytes of items ctx's call sent.
func wrote(ctx context.Context, bytes int) {
	if n := counted(ctx); n != nil {
		n.written += int64(bytes)
	}
}

// readBytes counts bytes of item values ctx's call received.
func readBytes(ctx context.Context, bytes int) {
	if n := counted(ctx); n != nil {
		n.read += int64(bytes)
	}
}

// item records the namespace and key the call works on (key "": none).
func (c *opCall) item(ns []string, key string) {
	c.ns, c.key = ns, key
	if !c.span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 2)
	if ns != nil {
		attrs = append(attrs, attrNamespace.StringSlice(ns))
	}
	if key != "" {
		attrs = append(attrs, attrKey.String(key))
	}
	c.span.SetAttributes(attrs...)
}

// set adds attributes to a recording span.
func (c *opCall) set(kv ...attribute.KeyValue) {
	if c.span.IsRecording() {
		c.span.SetAttributes(kv...)
	}
}

// end ends the call with its error (nil for success) and returns err. A
// Get that finds nothing is no failure: redcheck.found says so.
func (c *opCall) end(err error) error {
	elapsed := time.Since(c.start).Seconds()
	t := c.t
	miss := c.op == opGet && errors.Is(err, ErrNotFound)
	failed := err != nil && !miss
	kind := ""
	if failed {
		kind = errorType(err)
		attrs := []attribute.KeyValue{dbtel.ErrorType.String(kind)}
		if code := dbtel.RedisStatus(err); code != "" {
			attrs = append(attrs, dbtel.Status.String(code))
		}
		withKind := metric.WithAttributeSet(attribute.NewSet(append(t.base[c.op][:len(t.base[c.op]):len(t.base[c.op])], attrs...)...))
		t.duration.Record(c.ctx, elapsed, withKind)
		if kind == kindDataLoss {
			t.dataLoss.Add(c.ctx, 1, withKind)
			c.log(err)
		}
	} else {
		t.duration.Record(c.ctx, elapsed, t.ok[c.op])
	}
	if c.n.written > 0 {
		t.written.Add(c.ctx, c.n.written, t.ok[c.op])
	}
	if c.n.read > 0 {
		t.read.Add(c.ctx, c.n.read, t.ok[c.op])
	}
	if c.span.IsRecording() {
		attrs := []attribute.KeyValue{attrRoundTrips.Int(c.n.trips)}
		if c.n.written > 0 {
			attrs = append(attrs, attrWritten.Int64(c.n.written))
		}
		if c.n.read > 0 {
			attrs = append(attrs, attrRead.Int64(c.n.read))
		}
		if c.op == opGet && (err == nil || miss) {
			attrs = append(attrs, attrFound.Bool(err == nil))
		}
		if failed {
			attrs = append(attrs, dbtel.ErrorType.String(kind))
			if code := dbtel.RedisStatus(err); code != "" {
				attrs = append(attrs, dbtel.Status.String(code))
			}
			shown := err
			if !quotesNoData(kind) {
				shown = dbtel.Redacted{Pkg: "redisstore", Kind: kind}
			}
			c.span.RecordError(shown)
			c.span.SetStatus(codes.Error, shown.Error())
		}
		c.span.SetAttributes(attrs...)
	}
	c.span.End()
	return err
}

// log writes the record of a detected data loss (Warn) to Options.Logger,
// with the span's attributes.
func (c *opCall) log(err error) {
	if c.t.logger == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String(string(dbtel.Operation), operations[c.op].name),
		slog.String(string(attrPrefix), c.t.prefix),
	}
	if c.ns != nil {
		attrs = append(attrs, slog.Any(string(attrNamespace), c.ns))
	}
	if c.key != "" {
		attrs = append(attrs, slog.String(string(attrKey), c.key))
	}
	if sc := c.span.SpanContext(); sc.IsValid() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	attrs = append(attrs, slog.String(string(dbtel.ErrorType), kindDataLoss), slog.String("error", err.Error()))
	c.t.logger.LogAttrs(c.ctx, slog.LevelWarn, "redcheck: data loss detected", attrs...)
}

// Error kinds (error.type) of the store's errors; a Redis error's kind is
// its prefix ("OOM", "READONLY", "ERR"...).
const (
	kindDataLoss         = "data_loss"
	kindNotFound         = "not_found"
	kindInvalidOptions   = "invalid_config"
	kindInvalidNamespace = "invalid_namespace"
	kindInvalidKey       = "invalid_key"
	kindInvalidValue     = "invalid_value"
	kindInvalidFilter    = "invalid_filter"
	kindInvalidArgument  = "invalid_argument"
	kindEmbedding        = "embedding"
	kindCorrupt          = "corrupt"
	kindDecrypt          = "decrypt"
	kindCanceled         = dbtel.KindCanceled
	kindDeadline         = dbtel.KindDeadline
	kindNetwork          = dbtel.KindNetwork
	kindOther            = dbtel.KindOther
)

// errorType is the kind of err (error.type): low-cardinality, a metric
// attribute.
func errorType(err error) string {
	switch {
	case errors.Is(err, checkpoint.ErrDataLoss):
		return kindDataLoss
	case errors.Is(err, ErrNotFound):
		return kindNotFound
	case errors.Is(err, ErrInvalidOptions):
		return kindInvalidOptions
	case errors.Is(err, ErrInvalidNamespace):
		return kindInvalidNamespace
	case errors.Is(err, ErrInvalidKey):
		return kindInvalidKey
	case errors.Is(err, ErrInvalidValue):
		return kindInvalidValue
	case errors.Is(err, ErrInvalidFilter):
		return kindInvalidFilter
	case errors.Is(err, ErrInvalidArgument):
		return kindInvalidArgument
	case errors.Is(err, ErrEmbedding):
		return kindEmbedding
	case errors.Is(err, ErrCorrupt):
		return kindCorrupt
	case errors.Is(err, checkpoint.ErrDecrypt):
		return kindDecrypt
	}
	return dbtel.ErrorKind(err)
}

// quotesNoData reports whether the messages of errors of kind quote
// nothing but namespaces, keys and Redis's or the network's words, so a
// span may carry them. The others may quote a value: a value JSON refuses,
// a filter's operand, an embedder's complaint about a text, a stored value
// that does not decode.
func quotesNoData(kind string) bool {
	switch kind {
	case kindInvalidValue, kindInvalidFilter, kindEmbedding, kindCorrupt, kindDecrypt, kindOther:
		return false
	}
	return true
}
