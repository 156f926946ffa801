module github.com/graphstate/redcheck

// The floors (README, make test-floor): Go 1.23, the first with iter.Seq2;
// go-redis v9.16.0, the first that retries a failed dial (v9.15.0 was
// withdrawn). Raise them only for a feature the code cannot do without.
go 1.23.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/oklog/ulid/v2 v2.1.2
	github.com/redis/go-redis/v9 v9.16.0
	github.com/vmihailenco/msgpack/v5 v5.4.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
)
