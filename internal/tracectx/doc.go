// Package tracectx carries the W3C trace context of the span that made a
// write into the event the write publishes (docs/storage-format.md,
// "Events": the fields traceparent and tracestate), and reads it back for
// the consumer's span to link to. It uses OpenTelemetry's API only.
package tracectx
