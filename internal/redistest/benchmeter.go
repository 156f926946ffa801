package redistest

import (
	"testing"

	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/redis/go-redis/v9"
)

// BenchMeter counts the round trips of a benchmark and the time Redis spent
// running its scripts (EVALSHA and EVAL, from INFO commandstats) and on its
// main thread (INFO cpu): figures that the client's own CPU load does not
// inflate, as it does wall time on a small machine. Commandstats are global,
// so the server figures are only meaningful on a server the benchmark has to
// itself, as [Real] starts when REDIS_URL is unset.
type BenchMeter struct {
	*Counter
	rdb          *redis.Client
	calls, usecs int64
	cpu          float64
}

// NewBenchMeter adds a round-trip counter to rdb and returns the meter.
func NewBenchMeter(rdb *redis.Client) *BenchMeter {
	return &BenchMeter{Counter: CountRoundTrips(rdb), rdb: rdb}
}

// Reset starts a new measurement.
func (m *BenchMeter) Reset() {
	m.calls, m.usecs = redisserver.ScriptStats(m.rdb)
	m.cpu = redisserver.MainThreadCPU(m.rdb)
	m.Counter.Reset() // last: the INFO calls above are not the benchmark's
}

// Report adds roundtrips/op, server-µs/op (script time) and
// server-cpu-µs/op (main thread CPU) to b's results.
func (m *BenchMeter) Report(b *testing.B) {
	b.ReportMetric(float64(m.Load())/float64(b.N), "roundtrips/op") // first, before the INFO calls
	if calls, usecs := redisserver.ScriptStats(m.rdb); calls > m.calls {
		b.ReportMetric(float64(usecs-m.usecs)/float64(b.N), "server-µs/op")
	}
	if cpu := redisserver.MainThreadCPU(m.rdb); cpu > 0 {
		b.ReportMetric((cpu-m.cpu)*1e6/float64(b.N), "server-cpu-µs/op")
	}
}
