package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// slowlogLen is the SLOWLOG length a BlockMeter sets (slowlog-max-len), and
// how many entries it reads.
const slowlogLen = 4096

// pingPause is the pause between two PINGs of the in-process loop.
const pingPause = 200 * time.Microsecond

// waitLimit bounds how long the meter waits for its PING loop to start.
const waitLimit = 10 * time.Second

// BlockMeterOptions configures [NewBlockMeter]. The zero value PINGs from
// this process and logs commands of 1 ms or more.
type BlockMeterOptions struct {
	// RedisCLI PINGs from redis-cli --latency, in samples of one second,
	// instead of from a goroutine of the test. redis-cli is a process of
	// its own, so the test binary's garbage collector and scheduler do not
	// count as Redis blocking: use it beside long, busy operations on a
	// small machine. But it PINGs every 10 ms and times in whole
	// milliseconds, so it reads a block up to 11 ms short, and Read waits
	// for the sample in progress. Without redis-cli on PATH, or when the
	// client uses TLS or a Unix socket, the meter PINGs from this process.
	RedisCLI bool
	// SlowerThan is the SLOWLOG threshold the meter sets
	// (slowlog-log-slower-than) while it runs; 0 means 1 ms. SLOWLOG keeps
	// the newest 4096 entries: a higher threshold keeps a long run from
	// pushing its slowest command out.
	SlowerThan time.Duration
}

// BlockMeter measures how long Redis blocks its other clients while a test
// runs: the worst PING round trip of a connection of its own, which any
// block delays (a script, a large DEL, a fork), and the slowest command in
// SLOWLOG, as Redis timed it, with its name. Start it with
// [NewBlockMeter], [BlockMeter.Reset] it before each phase and
// [BlockMeter.Read] it after:
//
//	m := redistest.NewBlockMeter(t, rdb, redistest.BlockMeterOptions{})
//	m.Reset(t)
//	// ... operation under test ...
//	if ping, slow, cmd := m.Read(t); ping > limit || slow > limit {
//		t.Errorf("blocked Redis: PING %v, SLOWLOG %v (%s)", ping, slow, cmd)
//	}
//
// Both figures are server-wide: measure on a server no other test uses
// meanwhile ([StartServer], or [Real] with no parallel tests), on the real
// tier only (miniredis blocks nothing). The meter sets SLOWLOG's threshold
// and length, and resets it; it puts the settings back when it stops.
type BlockMeter struct {
	t       testing.TB // for errors of the PING loop
	rdb     *redis.Client
	restore map[string]string // SLOWLOG settings to put back
	worst   atomic.Int64      // ns: the worst PING since Reset
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup

	// cli is "" when the meter PINGs in-process.
	cli     string
	cliArgs []string
	cliEnv  []string

	mu   sync.Mutex
	cond *sync.Cond // on mu: a PING or sample ended, or the loop returned
	// started and ended count the PINGs of the in-process loop, or the
	// samples of redis-cli: the latest to end is number ended.
	started, ended int
	phase          int // counts Resets: a sample of an earlier phase is discarded
	first          int // the first sample of this phase
	cancel         context.CancelFunc
	done           bool // the loop has returned
}

// NewBlockMeter starts measuring the Redis behind rdb, with a Reset: when
// it returns, the PING loop has answered. The meter stops when the test
// ends, or at [BlockMeter.Stop].
func NewBlockMeter(t testing.TB, rdb *redis.Client, opts BlockMeterOptions) *BlockMeter {
	t.Helper()
	ctx := context.Background()
	m := &BlockMeter{t: t, rdb: rdb, restore: map[string]string{}, stop: make(chan struct{})}
	m.cond = sync.NewCond(&m.mu)
	if opts.SlowerThan == 0 {
		opts.SlowerThan = time.Millisecond
	}
	t.Cleanup(m.Stop)
	for name, v := range map[string]string{
		"slowlog-log-slower-than": strconv.FormatInt(opts.SlowerThan.Microseconds(), 10),
		"slowlog-max-len":         strconv.Itoa(slowlogLen),
	} {
		was, err := rdb.ConfigGet(ctx, name).Result()
		if err != nil {
			t.Fatalf("redistest: CONFIG GET %s: %v", name, err)
		}
		m.restore[name] = was[name]
		if err := rdb.ConfigSet(ctx, name, v).Err(); err != nil {
			t.Fatalf("redistest: CONFIG SET %s %s: %v", name, v, err)
		}
	}
	if opts.RedisCLI {
		m.cli = m.redisCLI(t)
	}
	if m.cli == "" {
		popts := *rdb.Options()
		popts.PoolSize = 1
		ping := redis.NewClient(&popts)
		m.wg.Add(1)
		go m.pingLoop(ping)
	} else {
		m.wg.Add(1)
		go m.cliLoop()
	}
	m.Reset(t)
	if m.cli == "" {
		m.waitFor(t, "first PING", func() bool { return m.ended > 0 })
	}
	return m
}

// redisCLI returns the path of redis-cli and sets the arguments to run it
// against rdb's server, or returns "" (logging why) when the meter must
// PING in-process.
func (m *BlockMeter) redisCLI(t testing.TB) string {
	t.Helper()
	opts := m.rdb.Options()
	cli, err := exec.LookPath("redis-cli")
	host, port, splitErr := net.SplitHostPort(opts.Addr)
	switch {
	case err != nil:
		t.Logf("redistest: BlockMeter: %v; PINGs from this process instead", err)
		return ""
	case opts.TLSConfig != nil || opts.Network == "unix" || splitErr != nil:
		t.Logf("redistest: BlockMeter: redis-cli cannot reach %s %s; PINGs from this process instead", opts.Network, opts.Addr)
		return ""
	}
	m.cliArgs = []string{"-h", host, "-p", port, "--latency", "--raw", "-i", "1"}
	if opts.Username != "" {
		m.cliArgs = append(m.cliArgs, "--user", opts.Username)
	}
	m.cliEnv = os.Environ()
	if opts.Password != "" {
		m.cliEnv = append(m.cliEnv, "REDISCLI_AUTH="+opts.Password)
	}
	return cli
}

// Reset starts a new phase: it forgets the worst PING, empties SLOWLOG and,
// with redis-cli, starts a new sample and waits for its first PING.
func (m *BlockMeter) Reset(t testing.TB) {
	t.Helper()
	m.mu.Lock()
	m.phase++
	m.first = m.started + 1
	if m.cancel != nil {
		m.cancel() // a sample of the phase before: discarded
	}
	m.mu.Unlock()
	if err := m.rdb.Do(context.Background(), "SLOWLOG", "RESET").Err(); err != nil {
		t.Fatalf("redistest: SLOWLOG RESET: %v", err)
	}
	m.worst.Store(0)
	if m.cli == "" {
		return
	}
	// The killed redis-cli PINGs no more once it has ended; the new one
	// has PINGed once INFO commandstats counts one PING more.
	m.waitFor(t, "end of the sample before", func() bool { return m.ended >= m.first-1 })
	before := m.pingCalls(t)
	m.waitFor(t, "new sample", func() bool { return m.started >= m.first })
	for deadline := time.Now().Add(waitLimit); m.pingCalls(t) <= before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("redistest: BlockMeter: redis-cli sent no PING in %v", waitLimit)
		}
	}
}

// Read returns the worst PING round trip since Reset and the slowest
// SLOWLOG entry (0 and "" when no command reached the threshold) with its
// command: its name and first argument, or for EVALSHA of a script of
// internal/scriptrun its file name ("evalsha put.lua"). It first waits for
// the PING in flight, which a block that just ended held up, or with
// redis-cli for the sample in progress (up to a second).
func (m *BlockMeter) Read(t testing.TB) (ping, slow time.Duration, cmd string) {
	t.Helper()
	m.mu.Lock()
	last := m.started
	if m.cli != "" {
		last = max(last, m.first)
	}
	for m.ended < last && !m.done {
		m.cond.Wait()
	}
	m.mu.Unlock()
	ping = time.Duration(m.worst.Load())
	entries, err := m.rdb.SlowLogGet(context.Background(), slowlogLen).Result()
	if err != nil {
		t.Fatalf("redistest: SLOWLOG GET: %v", err)
	}
	for _, e := range entries {
		if e.Duration > slow {
			slow, cmd = e.Duration, commandName(e.Args)
		}
	}
	if len(entries) >= slowlogLen {
		t.Logf("redistest: BlockMeter: SLOWLOG is full (%d entries): older ones were dropped, and the slowest may be among them; raise SlowerThan", len(entries))
	}
	return ping, slow, cmd
}

// Stop stops the PING loop and puts SLOWLOG's settings back. It is called
// when the test ends; calling it again does nothing.
func (m *BlockMeter) Stop() {
	m.once.Do(func() {
		close(m.stop)
		m.mu.Lock()
		if m.cancel != nil {
			m.cancel()
		}
		m.mu.Unlock()
		m.wg.Wait()
		for name, v := range m.restore {
			_ = m.rdb.ConfigSet(context.Background(), name, v).Err()
		}
	})
}

// observe folds one PING round trip into the worst.
func (m *BlockMeter) observe(d time.Duration) {
	for {
		w := m.worst.Load()
		if int64(d) <= w || m.worst.CompareAndSwap(w, int64(d)) {
			return
		}
	}
}

// pingLoop PINGs on c, a connection of its own, until Stop.
func (m *BlockMeter) pingLoop(c *redis.Client) {
	defer m.wg.Done()
	defer m.loopDone()
	defer func() { _ = c.Close() }()
	for !m.stopped() {
		m.mu.Lock()
		m.started++
		m.mu.Unlock()
		start := time.Now()
		err := c.Ping(context.Background()).Err()
		m.observe(time.Since(start))
		m.mu.Lock()
		m.ended++
		m.cond.Broadcast()
		m.mu.Unlock()
		if err != nil {
			m.t.Errorf("redistest: BlockMeter: PING: %v", err)
			return
		}
		time.Sleep(pingPause)
	}
}

// cliLoop runs redis-cli --latency, one sample of a second after another,
// until Stop. A sample that Reset or Stop kills is discarded.
func (m *BlockMeter) cliLoop() {
	defer m.wg.Done()
	defer m.loopDone()
	for {
		m.mu.Lock()
		if m.stopped() { // under mu: Stop kills a sample it sees started
			m.mu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		m.cancel = cancel
		m.started++
		n, phase := m.started, m.phase
		m.mu.Unlock()

		cmd := exec.CommandContext(ctx, m.cli, m.cliArgs...)
		cmd.Env = m.cliEnv
		out, err := cmd.Output()
		cancel()
		// --raw prints "min max avg samples", in milliseconds.
		var lo, hi, samples int64
		var avg float64
		if err == nil {
			if _, err = fmt.Sscan(string(out), &lo, &hi, &avg, &samples); err != nil {
				err = fmt.Errorf("printed %q: %w", out, err)
			}
		}
		m.mu.Lock()
		current := phase == m.phase // else Reset killed it
		if err == nil && current {
			m.observe(time.Duration(hi) * time.Millisecond)
		}
		m.ended = n // once folded in: Read may go on
		m.cond.Broadcast()
		m.mu.Unlock()
		if !current || m.stopped() {
			continue // killed by Reset, or by Stop: the loop ends
		}
		if err != nil {
			m.t.Errorf("redistest: BlockMeter: redis-cli --latency: %v", err)
			return
		}
	}
}

// stopped tells whether Stop was called.
func (m *BlockMeter) stopped() bool {
	select {
	case <-m.stop:
		return true
	default:
		return false
	}
}

// loopDone marks the PING loop returned.
func (m *BlockMeter) loopDone() {
	m.mu.Lock()
	m.done = true
	m.cond.Broadcast()
	m.mu.Unlock()
}

// pingCalls returns how many PINGs Redis has counted (INFO commandstats).
func (m *BlockMeter) pingCalls(t testing.TB) int64 {
	t.Helper()
	stats, err := redisserver.CommandStats(m.rdb)
	if err != nil {
		t.Fatalf("redistest: INFO commandstats: %v", err)
	}
	return stats["ping"].Calls
}

// waitFor waits up to waitLimit for ok, called with m.mu held, to hold.
func (m *BlockMeter) waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(time.Millisecond) {
		m.mu.Lock()
		done, loopDone := ok(), m.done
		m.mu.Unlock()
		switch {
		case done:
			return
		case loopDone:
			t.Fatalf("redistest: BlockMeter stopped before %s", what)
		case time.Now().After(deadline):
			t.Fatalf("redistest: BlockMeter: no %s in %v", what, waitLimit)
		}
	}
}

// scriptNames names the scripts of internal/scriptrun by SHA1.
var scriptNames = sync.OnceValue(func() map[string]string {
	names := map[string]string{}
	for name, sc := range scriptrun.All() {
		names[sc.Hash()] = name
	}
	return names
})

// commandName names a SLOWLOG entry by its first two arguments, naming the
// script of an EVALSHA: "evalsha put.lua", "del rctest:3f9a0c1be27d:k".
func commandName(args []string) string {
	switch len(args) {
	case 0:
		return ""
	case 1:
		return args[0]
	}
	arg := args[1]
	if name, ok := scriptNames()[arg]; ok {
		arg = name
	}
	return args[0] + " " + arg
}
