package tracectx

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The event fields of the trace context: the W3C Trace Context header names.
const (
	FieldParent = "traceparent"
	FieldState  = "tracestate"
)

// carrier is a TextMapCarrier of the two fields, with no map.
type carrier struct{ parent, state string }

func (c *carrier) Get(key string) string {
	switch key {
	case FieldParent:
		return c.parent
	case FieldState:
		return c.state
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case FieldParent:
		c.parent = value
	case FieldState:
		c.state = value
	}
}

func (c *carrier) Keys() []string { return []string{FieldParent, FieldState} }

// Fields returns the event fields (name, value pairs) of the span context
// of ctx: traceparent, and tracestate when it is not empty; none when ctx
// holds no valid span context (no tracing: nothing to write, nothing
// built).
func Fields(ctx context.Context) []string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	var c carrier
	propagation.TraceContext{}.Inject(ctx, &c)
	if c.parent == "" {
		return nil
	}
	if c.state == "" {
		return []string{FieldParent, c.parent}
	}
	return []string{FieldParent, c.parent, FieldState, c.state}
}

// SpanContext is the remote span context an event's traceparent and
// tracestate fields name; an invalid one (IsValid false) when traceparent
// is empty or malformed.
func SpanContext(traceparent, tracestate string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	c := carrier{parent: traceparent, state: tracestate}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), &c))
}
