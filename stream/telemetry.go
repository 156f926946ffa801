package stream

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/graphstate/redcheck/internal/tracectx"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// instrumentationName names the consumers' tracer and meter
// (docs/observability.md).
const instrumentationName = "github.com/graphstate/redcheck/stream"

// Attribute keys: the OpenTelemetry messaging conventions, and redcheck's.
// No attribute holds a value, a pending write or a metadata value, nor an
// error's message (a handler's may quote anything).
const (
	attrSystem      = attribute.Key("messaging.system")
	attrOpName      = attribute.Key("messaging.operation.name")
	attrOpType      = attribute.Key("messaging.operation.type")
	attrGroup       = attribute.Key("messaging.consumer.group.name")
	attrDestination = attribute.Key("messaging.destination.name")
	attrMessageID   = attribute.Key("messaging.message.id")
	attrErrorType   = attribute.Key("error.type")
	attrThread      = attribute.Key("redcheck.thread_id")
	attrConvID      = attribute.Key("gen_ai.conversation.id")
	attrNamespace   = attribute.Key("redcheck.checkpoint_ns")
	attrCheckpoint  = attribute.Key("redcheck.checkpoint_id")
	attrEventType   = attribute.Key("redcheck.event.type")
	attrGapReason   = attribute.Key("redcheck.gap.reason")
)

// Error kinds (error.type) of a handled event that failed; a Redis error's
// kind is its prefix.
const (
	kindHandler   = "handler_error"
	kindPanic     = "handler_panic"
	kindMalformed = "malformed_event"
	kindAck       = "ack_failed"
)

// telemetry is what a Subscriber's consumers report through.
type telemetry struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	consumed metric.Int64Counter
	gaps     metric.Int64Counter
	buried   metric.Int64Counter
	again    metric.Int64Counter
	meter    metric.Meter
	lag      metric.Int64ObservableGauge
	// receive holds the start options of Subscribe's spans, received the
	// options of its consumed.messages points (ok, and malformed).
	receive          []trace.SpanStartOption
	received         metric.AddOption
	receivedBadEvent metric.AddOption
	logger           *slog.Logger // nil: no logs
}

func newTelemetry(o Options) *telemetry {
	tp, mp := o.TracerProvider, o.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(instrumentationName)
	t := &telemetry{tracer: tp.Tracer(instrumentationName), meter: meter, logger: o.Logger}
	recv := []attribute.KeyValue{attrSystem.String("redis"), attrOpName.String("receive")}
	t.received = metric.WithAttributeSet(attribute.NewSet(recv...))
	t.receivedBadEvent = metric.WithAttributeSet(attribute.NewSet(append(recv[:2:2], attrErrorType.String(kindMalformed))...))
	t.receive = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(append(recv[:2:2], attrOpType.String("receive"))...)}
	var err error
	if t.duration, err = meter.Float64Histogram("messaging.process.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of a consumer's handling of one event: its handler and its acknowledgement."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)); err != nil {
		otel.Handle(err)
	}
	if t.consumed, err = meter.Int64Counter("messaging.client.consumed.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Events delivered to a consumer's handler (error.type when it failed).")); err != nil {
		otel.Handle(err)
	}
	if t.gaps, err = meter.Int64Counter("redcheck.consumer.gaps", metric.WithUnit("{gap}"),
		metric.WithDescription("Gaps a consumer reported: events that may be lost, by redcheck.gap.reason.")); err != nil {
		otel.Handle(err)
	}
	if t.buried, err = meter.Int64Counter("redcheck.consumer.dead_letters", metric.WithUnit("{message}"),
		metric.WithDescription("Events a consumer moved to the dead-letter stream after MaxDeliveries.")); err != nil {
		otel.Handle(err)
	}
	if t.again, err = meter.Int64Counter("redcheck.consumer.redeliveries", metric.WithUnit("{message}"),
		metric.WithDescription("Events a consumer claimed after MinIdle (their handling failed, or their consumer died) and handed to its handler again.")); err != nil {
		otel.Handle(err)
	}
	if t.lag, err = meter.Int64ObservableGauge("redcheck.consumer.lag", metric.WithUnit("{message}"),
		metric.WithDescription("Entries of a stream not yet delivered to a consumer group (XINFO GROUPS lag), observed while a Consume of the group runs.")); err != nil {
		otel.Handle(err)
	}
	return t
}

// watchLag registers, for the time of one Consume, the observation of the
// group's lag on each of its streams: one pipeline of XINFO GROUPS, one per
// stream (at most the shards), per collection. A stream's point carries
// its key as messaging.destination.name when it is a shard's feed; a
// thread's stream carries none (a thread ID is never a metric attribute).
// A stream that does not exist, or whose lag Redis cannot tell (entries
// deleted from its middle, Redis before 7.0), reports no point. Nil when
// the provider refuses the callback (the error goes to otel.Handle).
func (c *consumer_) watchLag() metric.Registration {
	t := c.tel.t
	if t.lag == nil {
		return nil
	}
	sets := make([]metric.ObserveOption, len(c.streams))
	for i, k := range c.streams {
		attrs := c.tel.base[:len(c.tel.base):len(c.tel.base)]
		if c.opts.ThreadID == "" {
			attrs = append(attrs, attrDestination.String(k))
		}
		sets[i] = metric.WithAttributeSet(attribute.NewSet(attrs...))
	}
	reg, err := t.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		pipe := c.s.rdb.Pipeline()
		infos := make([]*redis.XInfoGroupsCmd, len(c.streams))
		for i, k := range c.streams {
			infos[i] = pipe.XInfoGroups(ctx, k)
			infos[i].SetFirstKeyPos(2) // the key follows GROUPS: a Cluster routes it by it
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		var failed error
		for i, cmd := range infos {
			groups, err := cmd.Result()
			if err != nil {
				var re redis.Error
				if !errors.As(err, &re) && failed == nil {
					failed = err // not Redis's answer (no such key...): the connection's
				}
				continue
			}
			for _, g := range groups {
				if g.Name == c.group && g.Lag >= 0 {
					o.ObserveInt64(t.lag, g.Lag, sets[i])
				}
			}
		}
		return failed
	}, t.lag)
	if err != nil {
		otel.Handle(err)
		return nil
	}
	return reg
}

// consumerTel is one Consume's telemetry: what every event of it shares,
// built once.
type consumerTel struct {
	t     *telemetry
	group string
	name  string // the spans' name
	start []trace.SpanStartOption
	base  []attribute.KeyValue
	ok    []metric.RecordOption
	okAdd []metric.AddOption
}

func (t *telemetry) consumer(group string) *consumerTel {
	base := []attribute.KeyValue{attrSystem.String("redis"), attrOpName.String("process"), attrGroup.String(group)}
	span := append(base[:len(base):len(base)], attrOpType.String("process"))
	set := metric.WithAttributeSet(attribute.NewSet(base...))
	return &consumerTel{
		t:     t,
		group: group,
		name:  "process " + group,
		start: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(span...)},
		base:  base,
		ok:    []metric.RecordOption{set},
		okAdd: []metric.AddOption{set},
	}
}

// with returns the metric option of the consumer's attributes and kv.
func (ct *consumerTel) with(kv ...attribute.KeyValue) metric.MeasurementOption {
	attrs := make([]attribute.KeyValue, 0, len(ct.base)+len(kv))
	attrs = append(attrs, ct.base...)
	attrs = append(attrs, kv...)
	return metric.WithAttributeSet(attribute.NewSet(attrs...))
}

// event starts the span of one event's handling, linked to the span that
// wrote the event when the event carries its trace context (traceparent,
// tracestate: Event.TraceParent, Event.TraceState).
func (ct *consumerTel) event(ctx context.Context, stream, id, traceparent, tracestate string) (context.Context, trace.Span) {
	opts := ct.start
	if traceparent != "" {
		if sc := tracectx.SpanContext(traceparent, tracestate); sc.IsValid() {
			opts = append(opts[:len(opts):len(opts)], trace.WithLinks(trace.Link{SpanContext: sc}))
		}
	}
	ctx, span := ct.t.tracer.Start(ctx, ct.name, opts...)
	if span.IsRecording() {
		span.SetAttributes(attrDestination.String(stream), attrMessageID.String(id))
	}
	return ctx, span
}

// delivery starts the span of one event Subscribe yields (name
// "receive", kind consumer), linked to the span that wrote the event when
// it carries its trace context; the caller ends it when the yield returns,
// so that it spans the subscriber's handling of the event.
func (t *telemetry) delivery(ctx context.Context, stream string, ev Event, decodeErr error) trace.Span {
	opts := t.receive
	if ev.TraceParent != "" {
		if sc := ev.SpanContext(); sc.IsValid() {
			opts = append(opts[:len(opts):len(opts)], trace.WithLinks(trace.Link{SpanContext: sc}))
		}
	}
	_, span := t.tracer.Start(ctx, "receive", opts...)
	if decodeErr != nil {
		t.consumed.Add(ctx, 1, t.receivedBadEvent)
	} else {
		t.consumed.Add(ctx, 1, t.received)
	}
	if span.IsRecording() {
		span.SetAttributes(attrDestination.String(stream), attrMessageID.String(ev.ID))
		describe(span, ev)
		if decodeErr != nil {
			span.SetAttributes(attrErrorType.String(kindMalformed))
			span.SetStatus(codes.Error, kindMalformed)
		}
	}
	return span
}

// gapSpan records a gap as a span of its own (kind consumer, named "gap",
// its group's when group is not "") holding a span event "redcheck.gap"
// with the gap's reason, stream, positions and the number of IDs known
// lost, and an error status: a gap is no event to handle, but a trace
// shows where one was met.
func (t *telemetry) gapSpan(ctx context.Context, g *GapError, group string) {
	_, span := t.tracer.Start(ctx, "gap", t.receive[0])
	if span.IsRecording() {
		attrs := []attribute.KeyValue{attrSystem.String("redis"), attrDestination.String(g.Stream)}
		if group != "" {
			attrs = append(attrs, attrGroup.String(group))
		}
		span.SetAttributes(attrs...)
		span.AddEvent("redcheck.gap", trace.WithAttributes(attrGapReason.String(g.Reason), attribute.String("redcheck.gap.from", g.From),
			attribute.String("redcheck.gap.to", g.To), attribute.Int("redcheck.gap.lost", len(g.Lost))))
		span.SetStatus(codes.Error, "gap")
	}
	span.End()
}

// describe adds the event's address to a recording span.
func describe(span trace.Span, ev Event) {
	if !span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	if ev.Type != "" {
		attrs = append(attrs, attrEventType.String(string(ev.Type)))
	}
	if ev.ThreadID != "" {
		attrs = append(attrs, attrThread.String(ev.ThreadID), attrConvID.String(ev.ThreadID), attrNamespace.String(ev.CheckpointNS))
	}
	if ev.CheckpointID != "" {
		attrs = append(attrs, attrCheckpoint.String(ev.CheckpointID))
	}
	span.SetAttributes(attrs...)
}

// done ends one event's handling: kind is "" for an event handled and
// acknowledged, else the error kind.
func (ct *consumerTel) done(ctx context.Context, span trace.Span, began time.Time, kind string) {
	elapsed := time.Since(began).Seconds()
	if kind == "" {
		ct.t.duration.Record(ctx, elapsed, ct.ok...)
		ct.t.consumed.Add(ctx, 1, ct.okAdd...)
	} else {
		opt := ct.with(attrErrorType.String(kind))
		ct.t.duration.Record(ctx, elapsed, opt)
		ct.t.consumed.Add(ctx, 1, opt)
		if span.IsRecording() {
			span.SetAttributes(attrErrorType.String(kind))
			// The message is withheld: a handler's error, or a malformed
			// entry's, may quote a value.
			span.SetStatus(codes.Error, kind)
		}
	}
	span.End()
}

// gap counts a gap the consumer reports, and logs it (Warn).
func (ct *consumerTel) gap(g *GapError) {
	ct.t.gaps.Add(context.Background(), 1, ct.with(attrGapReason.String(g.Reason)))
	ct.t.gapSpan(context.Background(), g, ct.group)
	if ct.t.logger != nil {
		ct.t.logger.LogAttrs(context.Background(), slog.LevelWarn, "redcheck: a consumer group's stream has a gap: events may be lost to the group",
			slog.String(string(attrGroup), ct.group), slog.String(string(attrDestination), g.Stream), slog.String(string(attrGapReason), g.Reason),
			slog.String("from", g.From), slog.String("to", g.To), slog.Int("lost", len(g.Lost)))
	}
}

// dead counts an event moved to the dead-letter stream, and logs it
// (Warn).
// redelivered counts a claimed event handed to the handler again.
func (ct *consumerTel) redelivered(ctx context.Context) {
	ct.t.again.Add(ctx, 1, ct.okAdd...)
}

func (ct *consumerTel) dead(ctx context.Context, stream, id, deadStream string) {
	ct.t.buried.Add(ctx, 1, ct.okAdd...)
	if ct.t.logger != nil {
		ct.t.logger.LogAttrs(ctx, slog.LevelWarn, "redcheck: an event was moved to the dead-letter stream after its last delivery failed",
			slog.String(string(attrGroup), ct.group), slog.String(string(attrDestination), stream), slog.String(string(attrMessageID), id),
			slog.String("dead_letter_stream", deadStream))
	}
}

// handleKind is the error kind of a handling that failed with err at the
// handler (ErrHandlerPanic or the handler's error) or, when decoded is
// false, at decoding.
func handleKind(err error, decoded bool) string {
	switch {
	case !decoded:
		return kindMalformed
	case errors.Is(err, ErrHandlerPanic):
		return kindPanic
	}
	return kindHandler
}
