// Package redistest is the shared test infrastructure for redcheck.
//
// Tests come in two tiers, and both run under a plain `go test ./...`:
//
//   - The fast tier runs against miniredis, an in-process Redis fake. Use
//     [Mini] to get a fresh miniredis and a go-redis client for one test. It
//     needs nothing installed and is fully isolated per test.
//
//   - The real tier runs against a real redis-server. Use [Real] to get a
//     client. If the environment variable REDIS_URL is set, Real connects to
//     that server (parsed with redis.ParseURL); otherwise the helper starts
//     one redis-server per test binary on a free loopback port and shares it
//     between all tests of that binary. The machine's default Redis on port
//     6379 is never used unless REDIS_URL points at it.
//
// Real-tier tests share one server (or the REDIS_URL server), so they must
// isolate themselves by key prefix: build every key from [Prefix], and never
// issue FLUSHALL or FLUSHDB.
//
// When redis-server is not on PATH (and REDIS_URL is unset), [Real] and
// [StartServer] skip the test with a message saying so, except when the CI
// environment variable is non-empty: then they fail it, because CI must
// always run the real tier.
//
// # TestMain
//
// A package whose tests call [Real] should stop the shared server when its
// test binary is done:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// Without it the server still dies with the test binary on Linux (the child
// is started with a parent-death signal by internal/redisserver, the
// launcher this package shares with the benchmark harness), but its temporary directory is
// left behind, and on other systems the server process may outlive the test
// binary.
//
// # Dedicated servers
//
// [StartServer] starts a private redis-server with extra command-line
// arguments (ACL files, TLS ports, memory limits, cluster mode, ...) for a
// single test; it is stopped when the test ends. A test that wants to crash
// or restart Redis should use its own server rather than the shared one.
//
// # Counting round trips
//
// [CountRoundTrips] installs a go-redis hook that counts network round
// trips: one per command sent on its own and one per pipeline or
// transaction, however many commands it holds. Use it to pin down the cost
// of an operation, e.g. "a checkpoint Put is one round trip":
//
//	ctr := redistest.CountRoundTrips(client)
//	ctr.Reset()
//	// ... operation under test ...
//	if n := ctr.Load(); n != 1 {
//		t.Fatalf("round trips = %d, want 1 (commands: %v)", n, ctr.Commands())
//	}
//
// # Measuring how long Redis is blocked
//
// [NewBlockMeter] proves that an operation never blocks Redis for long by
// measuring it, not by reasoning: a PING loop on a connection of its own
// (in this process, or redis-cli --latency in a process of its own) reads
// the worst delay any other client saw, and SLOWLOG the slowest command,
// named ("evalsha prune.lua"). Reset it before each phase, Read it after:
//
//	m := redistest.NewBlockMeter(t, rdb, redistest.BlockMeterOptions{})
//	m.Reset(t)
//	// ... operation under test ...
//	ping, slow, cmd := m.Read(t)
//
// Both figures are server-wide, so measure on the real tier, on a server
// no other test uses meanwhile.
package redistest
