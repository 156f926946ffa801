package redissaver

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

// instrumentationName names the saver's tracer and meter
// (docs/observability.md).
const instrumentationName = "github.com/graphstate/redcheck/redissaver"

// Attribute keys of the saver's own (the database conventions' keys are
// internal/dbtel's, shared with the store). No attribute ever holds a
// channel value, a pending write or a metadata value (the metadata "step",
// a number, excepted).
const (
	attrConversation = attribute.Key("gen_ai.conversation.id")
	attrThread       = attribute.Key("redcheck.thread_id")
	attrNamespace    = attribute.Key("redcheck.checkpoint_ns")
	attrCheckpoint   = attribute.Key("redcheck.checkpoint_id")
	attrStep         = attribute.Key("redcheck.step")
	attrRoundTrips   = attribute.Key("redcheck.round_trips")
	attrBytesSent    = attribute.Key("redcheck.bytes.sent")
	attrBytesRecv    = attribute.Key("redcheck.bytes.received")
	attrSteps        = attribute.Key("redcheck.steps")
	attrFound        = attribute.Key("redcheck.found")
	attrTargetThread = attribute.Key("redcheck.target_thread_id")
	attrThreads      = attribute.Key("redcheck.thread_count")
	attrStrategy     = attribute.Key("redcheck.prune_strategy")
	attrRuns         = attribute.Key("redcheck.run_count")
	attrChannels     = attribute.Key("redcheck.channel_count")
	attrUnits        = attribute.Key("redcheck.units")
	attrViolations   = attribute.Key("redcheck.violations")
	attrCheckpoints  = attribute.Key("redcheck.checkpoints")
	attrReset        = attribute.Key("redcheck.reset")
	attrPages        = attribute.Key("redcheck.pages")
	attrTuples       = attribute.Key("redcheck.tuples")
	attrViolation    = attribute.Key("redcheck.violation.kind")
	attrPrefix       = attribute.Key("redcheck.prefix")
)

// The saver's metrics (docs/observability.md). Their attributes are few
// and bounded: the operation, the error kind, the server; never a thread.
const (
	metricDuration = "db.client.operation.duration"
	metricDataLoss = "redcheck.client.data_loss"
	metricRefused  = "redcheck.client.refused_writes"
	metricWritten  = "redcheck.client.written"
	metricRead     = "redcheck.client.read"
	metricTrips    = "redcheck.client.round_trips"
)

// tripBuckets are the bucket bounds of redcheck.client.round_trips: most
// calls take one or two round trips, a List one per page.
var tripBuckets = []float64{1, 2, 3, 4, 6, 8, 16, 32, 64}

// opKind is a public operation of the saver: each call is one span.
type opKind uint8

const (
	opPut opKind = iota
	opPutWrites
	opGetTuple
	opList
	opDeleteThread
	opDeleteForRuns
	opCopyThread
	opPrune
	opDeltaChannelHistory
	opSweep
	opVerify
	opReinitialize
	opLoadScripts
	numOps
)

// operations gives each operation its name (the span's name and
// db.operation.name) and its main script (db.stored_procedure.name; "" for
// an operation of several scripts, none of them the main one).
var operations = [numOps]struct{ name, script string }{
	opPut:                 {"Put", "put.lua"},
	opPutWrites:           {"PutWrites", "put_writes.lua"},
	opGetTuple:            {"GetTuple", "get_tuple.lua"},
	opList:                {"List", "list.lua"},
	opDeleteThread:        {"DeleteThread", "delete_thread.lua"},
	opDeleteForRuns:       {"DeleteForRuns", "delete_runs.lua"},
	opCopyThread:          {"CopyThread", ""},
	opPrune:               {"Prune", "prune.lua"},
	opDeltaChannelHistory: {"DeltaChannelHistory", "delta_history.lua"},
	opSweep:               {"Sweep", "sweep.lua"},
	opVerify:              {"Verify", ""},
	opReinitialize:        {"Reinitialize", ""},
	opLoadScripts:         {"LoadScripts", ""},
}

// telemetry is what a saver reports through: its tracer, and what every
// call shares, built once by New so that a call on the no-op providers
// builds no attribute.
type telemetry struct {
	tracer trace.Tracer
	// start holds, per operation, the options of its spans: the kind
	// (client) and the attributes every span of it carries.
	start [numOps][]trace.SpanStartOption

	duration metric.Float64Histogram
	dataLoss metric.Int64Counter
	refused  metric.Int64Counter
	written  metric.Int64Counter
	read     metric.Int64Counter
	trips    metric.Int64Histogram
	// base holds, per operation, the attributes of its metrics, and ok and
	// okAdd the options of a successful call's measurements (built once: a
	// call on the no-op providers allocates none).
	base  [numOps][]attribute.KeyValue
	ok    [numOps][]metric.RecordOption
	okAdd [numOps][]metric.AddOption

	logger *slog.Logger // nil: no logs
	prefix string
}

func newTelemetry(o Options, rdb redis.UniversalClient) *telemetry {
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := o.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := &telemetry{tracer: tp.Tracer(instrumentationName), logger: o.Logger, prefix: o.Prefix}
	meter := mp.Meter(instrumentationName)
	// An instrument the provider refuses is a no-op one, with the error
	// handed to otel.Handle: telemetry never fails the saver.
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
	if t.refused, err = meter.Int64Counter(metricRefused, metric.WithUnit("{call}"),
		metric.WithDescription("Put and PutWrites calls refused with nothing written, by error.type.")); err != nil {
		otel.Handle(err)
	}
	if t.written, err = meter.Int64Counter(metricWritten, metric.WithUnit("By"),
		metric.WithDescription("Bytes the saver's calls sent: the keys and arguments of their commands (values, fields, ids; a number by its decimal form), no command name, script or framing.")); err != nil {
		otel.Handle(err)
	}
	if t.read, err = meter.Int64Counter(metricRead, metric.WithUnit("By"),
		metric.WithDescription("Bytes the saver's calls received: the strings of their commands' replies, no integer or framing.")); err != nil {
		otel.Handle(err)
	}
	if t.trips, err = meter.Int64Histogram(metricTrips, metric.WithUnit("{round_trip}"),
		metric.WithDescription("Round trips to Redis per call of the saver (a pipeline is one)."),
		metric.WithExplicitBucketBoundaries(tripBuckets...)); err != nil {
		otel.Handle(err)
	}
	server := dbtel.ServerAttrs(rdb)
	for op := range numOps {
		attrs := []attribute.KeyValue{dbtel.System.String("redis"), dbtel.Operation.String(operations[op].name), attrPrefix.String(o.Prefix)}
		attrs = append(attrs, server...)
		t.base[op] = attrs
		set := metric.WithAttributeSet(attribute.NewSet(attrs...))
		t.ok[op] = []metric.RecordOption{set}
		t.okAdd[op] = []metric.AddOption{set}
		spanAttrs := attrs
		if sc := operations[op].script; sc != "" {
			spanAttrs = append(attrs[:len(attrs):len(attrs)], dbtel.Procedure.String(sc))
		}
		t.start[op] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(spanAttrs...)}
	}
	return t
}

// withBase returns the metric options of op's attributes and kv.
func (t *telemetry) withBase(op opKind, kv ...attribute.KeyValue) metric.MeasurementOption {
	attrs := make([]attribute.KeyValue, 0, len(t.base[op])+len(kv))
	attrs = append(attrs, t.base[op]...)
	attrs = append(attrs, kv...)
	return metric.WithAttributeSet(attribute.NewSet(attrs...))
}

// opCall is one call of a public operation under way: its span, and what
// it has counted. It lives on the caller's stack; begin starts it, end
// ends it.
type opCall struct {
	s     *Saver
	op    opKind
	ctx   context.Context
	span  trace.Span
	start time.Time
	// n counts the call's round trips, steps and bytes: the span's
	// attributes and the metrics read them.
	n *opCount
	// paused is the time the call spent in its caller's code (a List's
	// yield), not in the saver's: its duration leaves it out.
	paused time.Duration
	// The address the call works on, for its logs.
	thread, ns, id string
	addressed      bool
}

// opCount is what a recording call counts, reached from its context by
// Saver.run and the other senders of commands.
//
// Bytes sent are those of the keys and arguments of the commands the call
// sends (script calls and value reads: values, fields, ids; a number by its
// decimal form), without command names, scripts or the protocol's framing;
// bytes received are those of the strings of their replies (no integer, no
// framing). Other commands (a script load, the check of an emptied prefix)
// are round trips of no bytes.
type opCount struct {
	trips    int   // round trips: a script call, or a pipeline of them
	steps    int   // script calls: each one bounded step
	pages    int   // pages of a List
	sent     int64 // bytes of the keys and arguments sent
	received int64 // bytes of the reply strings received
}

// countKey is the context key of a call's *opCount.
type countKey struct{}

// countCtx is a call's context: its parent and its counters, in one
// allocation. A call counts whatever the providers: whether a metric
// instrument records is not known to the API.
type countCtx struct {
	context.Context
	n opCount
}

// Value answers the call's counters for countKey, the parent's values for
// any other key.
func (c *countCtx) Value(key any) any {
	if key == (countKey{}) {
		return &c.n
	}
	return c.Context.Value(key)
}

// begin starts a call of op: its span, child of ctx's. The context it
// returns carries the span and the counters: the call runs under it.
func (s *Saver) begin(ctx context.Context, op opKind) (context.Context, opCall) {
	ctx, span := s.tel.tracer.Start(ctx, operations[op].name, s.tel.start[op]...)
	cc := &countCtx{Context: ctx}
	c := opCall{s: s, op: op, ctx: cc, span: span, start: time.Now(), n: &cc.n}
	return cc, c
}

// counted returns the counters of the call ctx belongs to, nil outside a
// call.
func counted(ctx context.Context) *opCount {
	n, _ := ctx.Value(countKey{}).(*opCount)
	return n
}

// sent counts a round trip of ctx's call that ran scripts script calls.
func sent(ctx context.Context, scripts int) {
	if n := counted(ctx); n != nil {
		n.trips++
		n.steps += scripts
	}
}

// paged counts a page of ctx's List call.
func paged(ctx context.Context) {
	if n := counted(ctx); n != nil {
		n.pages++
	}
}

// address records the checkpoint address the call works on (any part may
// be "": left out).
func (c *opCall) address(thread, ns, id string) {
	c.thread, c.ns, c.id, c.addressed = thread, ns, id, thread != ""
	if !c.span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	if thread != "" {
		attrs = append(attrs, attrThread.String(thread), attrConversation.String(thread))
		attrs = append(attrs, attrNamespace.String(ns))
	}
	if id != "" {
		attrs = append(attrs, attrCheckpoint.String(id))
	}
	c.span.SetAttributes(attrs...)
}

// step records the checkpoint's step, when metadata holds one.
func (c *opCall) step(md checkpoint.Metadata) {
	if !c.span.IsRecording() {
		return
	}
	if n, ok := stepOf(md); ok {
		c.span.SetAttributes(attrStep.Int64(n))
	}
}

// stepOf is metadata "step" as an integer, when it is one.
func stepOf(md checkpoint.Metadata) (int64, bool) {
	switch v := md["step"].(type) {
	case int:
		return int64(v), true
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case uint:
		return int64(v), true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		return int64(v), true
	case float64:
		return int64(v), true
	case float32:
		return int64(v), true
	}
	return 0, false
}

// set adds an attribute to a recording span. Build kv only of what is at
// hand (no formatting): it is built on the no-op path too.
func (c *opCall) set(kv attribute.KeyValue) {
	if c.span.IsRecording() {
		c.span.SetAttributes(kv)
	}
}

// end ends the call with its error (nil for success) and returns err.
// A GetTuple that finds nothing is no failure: redcheck.found says so.
func (c *opCall) end(err error) error {
	elapsed := (time.Since(c.start) - c.paused).Seconds()
	t := c.s.tel
	if err == nil || c.miss(err) {
		t.duration.Record(c.ctx, elapsed, t.ok[c.op]...)
	} else {
		c.failed(err, elapsed)
	}
	if c.n.trips > 0 {
		t.trips.Record(c.ctx, int64(c.n.trips), t.ok[c.op]...)
	}
	if c.n.sent > 0 {
		t.written.Add(c.ctx, c.n.sent, t.okAdd[c.op]...)
	}
	if c.n.received > 0 {
		t.read.Add(c.ctx, c.n.received, t.okAdd[c.op]...)
	}
	if c.span.IsRecording() {
		c.endSpan(err)
	}
	c.span.End()
	return err
}

// failed records the metrics of a call that failed with err.
func (c *opCall) failed(err error, elapsed float64) {
	t := c.s.tel
	kind := errorType(err)
	attrs := []attribute.KeyValue{dbtel.ErrorType.String(kind)}
	if code := dbtel.RedisStatus(err); code != "" {
		attrs = append(attrs, dbtel.Status.String(code))
	}
	withKind := t.withBase(c.op, attrs...)
	t.duration.Record(c.ctx, elapsed, withKind)
	if kind == kindDataLoss || kind == kindPrefixReset {
		t.dataLoss.Add(c.ctx, 1, withKind)
		c.log(kind, err)
	}
	if (c.op == opPut || c.op == opPutWrites) && refusal(err, kind) {
		t.refused.Add(c.ctx, 1, withKind)
	}
}

// refusal reports whether a Put or PutWrites that failed with err (of
// kind) wrote nothing: refused before its script, by its script (lost
// data, a prefix found emptied) or by Redis (an error reply: OOM,
// READONLY...). A call cut off (cancelled, timed out, a network error) or
// whose reply does not parse may have been stored, and is no refusal.
func refusal(err error, kind string) bool {
	switch kind {
	case kindInvalidConfig, kindInvalidCheckpoint, kindSerialization, kindDataLoss, kindPrefixReset:
		return true
	case kindCorrupt, kindCanceled, kindDeadline, kindNetwork, kindOther, kindNotFound:
		return false
	}
	return dbtel.RedisStatus(err) != ""
}

// log writes the record of a data loss (Warn) or a prefix reset (Error)
// to Options.Logger, with the span's attributes.
func (c *opCall) log(kind string, err error) {
	t := c.s.tel
	if t.logger == nil {
		return
	}
	level, msg := slog.LevelWarn, "redcheck: data loss detected"
	if kind == kindPrefixReset {
		level, msg = slog.LevelError, "redcheck: the prefix was emptied (every checkpoint lost) and created again"
	}
	attrs := []slog.Attr{
		slog.String(string(dbtel.Operation), operations[c.op].name),
		slog.String(string(attrPrefix), t.prefix),
	}
	if c.addressed {
		attrs = append(attrs, slog.String(string(attrThread), c.thread), slog.String(string(attrNamespace), c.ns))
	}
	if c.id != "" {
		attrs = append(attrs, slog.String(string(attrCheckpoint), c.id))
	}
	if sc := c.span.SpanContext(); sc.IsValid() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	attrs = append(attrs, slog.String(string(dbtel.ErrorType), kind), slog.String("error", err.Error()))
	t.logger.LogAttrs(c.ctx, level, msg, attrs...)
}

// violations counts the violations Verify found as detected data loss, by
// kind.
func (c *opCall) violations(res *CheckResult) {
	if res == nil || len(res.Violations) == 0 {
		return
	}
	byKind := map[string]int64{}
	for _, v := range res.Violations {
		byKind[v.Kind]++
	}
	for kind, n := range byKind {
		c.s.tel.dataLoss.Add(c.ctx, n, c.s.tel.withBase(c.op, attrViolation.String(kind)))
	}
}

func (c *opCall) endSpan(err error) {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, attrRoundTrips.Int(c.n.trips), attrSteps.Int(c.n.steps),
		attrBytesSent.Int64(c.n.sent), attrBytesRecv.Int64(c.n.received))
	if c.op == opList {
		attrs = append(attrs, attrPages.Int(c.n.pages))
	}
	if c.op == opGetTuple && (err == nil || c.miss(err)) {
		attrs = append(attrs, attrFound.Bool(err == nil))
	}
	if err != nil && !c.miss(err) {
		kind := errorType(err)
		attrs = append(attrs, dbtel.ErrorType.String(kind))
		if code := dbtel.RedisStatus(err); code != "" {
			attrs = append(attrs, dbtel.Status.String(code))
		}
		shown := err
		if !quotesNoData(kind) {
			shown = dbtel.Redacted{Pkg: "redissaver", Kind: kind}
		}
		c.span.RecordError(shown)
		c.span.SetStatus(codes.Error, shown.Error())
	}
	c.span.SetAttributes(attrs...)
}

// miss reports an error that is a normal answer, not a failure: a
// GetTuple of a checkpoint that does not exist.
func (c *opCall) miss(err error) bool {
	return c.op == opGetTuple && errors.Is(err, checkpoint.ErrNotFound)
}

// Error kinds (error.type) of the package's errors; a Redis error's kind is
// its prefix ("OOM", "READONLY", "ERR"...).
const (
	kindPrefixReset       = "prefix_reset"
	kindDataLoss          = "data_loss"
	kindInvalidCheckpoint = "invalid_checkpoint"
	kindInvalidConfig     = "invalid_config"
	kindNotFound          = "not_found"
	kindCorrupt           = "corrupt"
	kindDecrypt           = "decrypt"
	kindSerialization     = "serialization"
	kindCanceled          = dbtel.KindCanceled
	kindDeadline          = dbtel.KindDeadline
	kindNetwork           = dbtel.KindNetwork
	kindOther             = dbtel.KindOther
)

// errorType is the kind of err (error.type): low-cardinality, a metric
// attribute.
func errorType(err error) string {
	switch {
	case errors.Is(err, ErrPrefixReset):
		return kindPrefixReset
	case errors.Is(err, checkpoint.ErrDataLoss):
		return kindDataLoss
	case errors.Is(err, checkpoint.ErrInvalidCheckpoint):
		return kindInvalidCheckpoint
	case errors.Is(err, checkpoint.ErrInvalidConfig):
		return kindInvalidConfig
	case errors.Is(err, checkpoint.ErrNotFound):
		return kindNotFound
	case errors.Is(err, checkpoint.ErrDecrypt):
		return kindDecrypt
	case errors.Is(err, ErrCorrupt):
		return kindCorrupt
	case errors.Is(err, checkpoint.ErrSerialization):
		return kindSerialization
	}
	return dbtel.ErrorKind(err)
}

// quotesNoData reports whether the messages of errors of kind quote nothing
// but keys, ids, channel names and versions, and Redis's or the network's
// words, so a span may carry them. Those of the other kinds may quote a
// value: a refused metadata value, a serializer's complaint about a value,
// a stored reply that does not parse.
func quotesNoData(kind string) bool {
	switch kind {
	case kindInvalidCheckpoint, kindInvalidConfig, kindCorrupt, kindDecrypt, kindSerialization, kindOther:
		return false
	}
	return true
}
