// Package dbtel holds what the saver's and the store's telemetry share: the
// OpenTelemetry database conventions' attributes of a Redis client and of a
// Redis error, and the advised duration buckets. OpenTelemetry API only.
package dbtel
