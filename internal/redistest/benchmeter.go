package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"

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
	m.calls, m.usecs = ScriptStats(m.rdb)
	m.cpu = MainThreadCPU(m.rdb)
	m.Counter.Reset() // last: the INFO calls above are not the benchmark's
}

// Report adds roundtrips/op, server-µs/op (script time) and
// server-cpu-µs/op (main thread CPU) to b's results.
func (m *BenchMeter) Report(b *testing.B) {
	b.ReportMetric(float64(m.Load())/float64(b.N), "roundtrips/op") // first, before the INFO calls
	if calls, usecs := ScriptStats(m.rdb); calls > m.calls {
		b.ReportMetric(float64(usecs-m.usecs)/float64(b.N), "server-µs/op")
	}
	if cpu := MainThreadCPU(m.rdb); cpu > 0 {
		b.ReportMetric((cpu-m.cpu)*1e6/float64(b.N), "server-cpu-µs/op")
	}
}

// ScriptStats returns the calls of EVALSHA and EVAL Redis has counted and
// the microseconds it spent in them (INFO commandstats); zeros on error.
func ScriptStats(rdb redis.UniversalClient) (calls, usecs int64) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usecs += n
			}
		}
	}
	return calls, usecs
}

// MainThreadCPU returns the CPU seconds Redis's main thread has used (user
// and system, INFO cpu); 0 on error. Unlike wall time, it does not grow
// when other processes compete for the CPU.
func MainThreadCPU(rdb redis.UniversalClient) float64 {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		return 0
	}
	var sum float64
	for _, line := range strings.Split(info, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user_main_thread" || name == "used_cpu_sys_main_thread") {
			f, _ := strconv.ParseFloat(v, 64)
			sum += f
		}
	}
	return sum
}
