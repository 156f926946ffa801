// Package telemetrycheck holds the tests that look at the telemetry of
// every package at once: that no span, metric or log record of the saver,
// the stream consumers and the store ever holds a payload, and that the
// library packages depend on OpenTelemetry's API only, never on its SDK.
// It has no code of its own.
package telemetrycheck
