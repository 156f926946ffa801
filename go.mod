module github.com/graphstate/redcheck

// The floors (README, make test-floor): Go 1.23, the first with iter.Seq2;
// go-redis v9.16.0, the first that retries a failed dial (v9.15.0 was
// withdrawn); OpenTelemetry v1.38.0, the last release whose modules say go
// 1.23 (v1.39.0 says go 1.24). The library imports OpenTelemetry's API
// only (otel, trace, metric, attribute, codes); the SDK is for tests.
// Raise them only for a feature the code cannot do without.
go 1.23.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/oklog/ulid/v2 v2.1.2
	github.com/redis/go-redis/v9 v9.16.0
	github.com/vmihailenco/msgpack/v5 v5.4.1
	go.opentelemetry.io/otel v1.38.0
	go.opentelemetry.io/otel/metric v1.38.0
	go.opentelemetry.io/otel/sdk v1.38.0
	go.opentelemetry.io/otel/sdk/metric v1.38.0
	go.opentelemetry.io/otel/trace v1.38.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.opentelemetry.io/auto/sdk v1.1.0 // indirect
	golang.org/x/sys v0.35.0 // indirect
)
