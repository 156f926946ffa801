package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/redis/go-redis/v9"
)

// pass is one measurement: conc goroutines run do until maxOps operations
// are done or budget has passed, after warmup operations that are not
// measured (they fill the connection pool and load scripts). A pass can be
// run in chunks interleaved with other passes (see interleave), so that a
// change of the machine's load during the run hits all of them alike.
type pass struct {
	impl, op string
	conc     int
	maxOps   int
	warmup   int
	budget   time.Duration
	meter    *meter // the client's meter; nil for none
	// stats, when set, is read for INFO commandstats before and after each
	// chunk: the server time of the commands the meter saw sent.
	stats *redis.Client
	// do runs operation number i (0-based over warmup and measurement
	// together) on goroutine w.
	do func(ctx context.Context, w, i int) error

	next   int // the next operation number
	warmed bool
	acc    sample
	err    error
}

// sample accumulates what the chunks of a pass measured.
type sample struct {
	lats    []time.Duration
	elapsed time.Duration
	use     usage
	mallocs uint64
	// cpu is the CPU time the whole process (the harness: client, go-redis,
	// its own bookkeeping) used during the measured operations; cpuOK is
	// false when a chunk could not read it.
	cpu   time.Duration
	cpuOK bool
	// serverUS is the server time of the measured operations (µs),
	// serverCPU the CPU time of Redis's main thread meanwhile (µs);
	// serverOK is false when a chunk could not read them.
	serverUS  float64
	serverCPU float64
	serverOK  bool
	// perCommand is the time and calls of every command Redis ran during
	// the chunks (with -breakdown).
	perCommand map[string]redisserver.CommandStat
}

// breakdown is the -breakdown flag.
var breakdown bool

// measure runs p whole and returns its row.
func measure(ctx context.Context, p pass) (Row, error) {
	p.chunk(ctx, p.maxOps, p.budget)
	return p.row()
}

// interleave runs passes in rounds: first every pass's warmup, then rounds
// that each run a share of every pass's operations and time, the order
// rotating by one pass per round so that no pass always comes first. A pass
// that fails is not run again.
func interleave(ctx context.Context, rounds int, ps ...*pass) {
	rounds = max(rounds, 1)
	for _, p := range ps {
		p.warm(ctx)
	}
	for r := range rounds {
		for k := range ps {
			p := ps[(k+r)%len(ps)]
			if p.err != nil {
				continue
			}
			left := p.maxOps - len(p.acc.lats)
			ops := (left + (rounds - r) - 1) / (rounds - r)
			if ops > 0 {
				p.chunk(ctx, ops, p.budget/time.Duration(rounds))
			}
		}
	}
}

// chunk runs up to ops operations of p within budget (after the warmup, on
// the first chunk) and adds them to p's sample. Round trips, bytes and
// allocations are deltas over the measured operations only: the meter's
// counters and runtime.MemStats.Mallocs, read before and after (so
// allocations of every goroutine of the process in that window count,
// go-redis's included). The first error stops the pass.
func (p *pass) chunk(ctx context.Context, ops int, budget time.Duration) {
	if p.err != nil {
		return
	}
	if p.conc < 1 || p.maxOps < 1 {
		p.err = fmt.Errorf("bad pass (concurrency %d, ops %d)", p.conc, p.maxOps)
		return
	}
	if p.warm(ctx); p.err != nil {
		return
	}
	runtime.GC()
	var st0 map[string]redisserver.CommandStat
	var sterr error
	var cpu0 float64
	if p.stats != nil && p.meter != nil {
		st0, sterr = redisserver.CommandStats(p.stats)
		cpu0 = redisserver.MainThreadCPU(p.stats)
		_, _ = p.meter.takeNames()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	u0 := p.meter.load()
	pcpu0, pcpuOK0 := processCPU()
	start := time.Now()
	lats, err := runWorkers(ctx, p.conc, p.next, ops, start.Add(budget), p.do)
	elapsed := time.Since(start)
	pcpu1, pcpuOK1 := processCPU()
	u1 := p.meter.load()
	runtime.ReadMemStats(&ms1)
	if err != nil {
		p.err = err
		return
	}
	first := len(p.acc.lats) == 0
	if p.stats != nil && p.meter != nil {
		names, inside := p.meter.takeNames()
		cpu1 := redisserver.MainThreadCPU(p.stats)
		st1, err := redisserver.CommandStats(p.stats)
		ok := sterr == nil && err == nil && cpu0 > 0 && cpu1 > 0
		if ok {
			p.acc.serverUS += serverTime(st0, st1, names, inside)
			p.acc.serverCPU += (cpu1 - cpu0) * 1e6
		}
		p.acc.serverOK = ok && (first || p.acc.serverOK)
		if ok && breakdown && p.conc == 1 {
			if p.acc.perCommand == nil {
				p.acc.perCommand = map[string]redisserver.CommandStat{}
			}
			for name, a := range st1 {
				b := st0[name]
				c := p.acc.perCommand[name]
				c.Calls += a.Calls - b.Calls
				c.Usecs += a.Usecs - b.Usecs
				p.acc.perCommand[name] = c
			}
		}
	}
	p.next += len(lats)
	u := u1.minus(u0)
	p.acc.lats = append(p.acc.lats, lats...)
	p.acc.elapsed += elapsed
	p.acc.use = usage{p.acc.use.sent + u.sent, p.acc.use.recv + u.recv, p.acc.use.trips + u.trips}
	p.acc.mallocs += ms1.Mallocs - ms0.Mallocs
	p.acc.cpuOK = pcpuOK0 && pcpuOK1 && (first || p.acc.cpuOK)
	p.acc.cpu += pcpu1 - pcpu0
}

// warm runs the pass's warmup operations, once.
func (p *pass) warm(ctx context.Context) {
	if p.warmed || p.err != nil {
		return
	}
	p.warmed = true
	if p.warmup > 0 {
		if _, err := runWorkers(ctx, p.conc, p.next, p.warmup, time.Now().Add(max(p.budget, time.Second)), p.do); err != nil {
			p.err = fmt.Errorf("warmup: %w", err)
			return
		}
		p.next += p.warmup
	}
}

// row returns the pass's row, or its error.
func (p *pass) row() (Row, error) {
	row := newRow(p.impl, p.op, p.conc)
	if p.err != nil {
		return row, fmt.Errorf("%s %s (concurrency %d): %w", p.impl, p.op, p.conc, p.err)
	}
	a := p.acc
	n := len(a.lats)
	row.N = n
	if n == 0 {
		return row, nil
	}
	row.OpsPerS = Num(float64(n) / a.elapsed.Seconds())
	row.P50us, row.P99us = latencyStats(a.lats)
	row.AllocsPerOp = Num(float64(a.mallocs) / float64(n))
	if len(a.perCommand) > 0 {
		printBreakdown(p.impl+" "+p.op, a.perCommand, n)
	}
	if a.serverOK {
		row.ServerUS = Num(a.serverUS / float64(n))
		row.ServerCPUus = Num(a.serverCPU / float64(n))
	}
	if p.meter != nil {
		row.RoundTrips = Num(float64(a.use.trips) / float64(n))
		row.Sent = Num(float64(a.use.sent) / float64(n))
		row.Recv = Num(float64(a.use.recv) / float64(n))
		row.BytesPerOp = row.Sent + row.Recv
	}
	return row, nil
}

// serverTime returns the microseconds Redis spent in the commands of names
// between two readings of INFO commandstats. Only the commands the client
// sent count: those a script runs are inside the script's time already, and
// those a transaction runs inside EXEC's. inside gives, per command, the
// calls sent inside transactions: a command also sent alone is charged the
// share of its time its other calls took (Redis keeps one figure per name).
func serverTime(before, after map[string]redisserver.CommandStat, names map[string]struct{}, inside map[string]int64) float64 {
	var us float64
	for name := range names {
		d := float64(after[name].Usecs - before[name].Usecs)
		if in := inside[name]; in > 0 {
			calls := after[name].Calls - before[name].Calls
			if calls <= in {
				continue
			}
			d *= float64(calls-in) / float64(calls)
		}
		us += d
	}
	return us
}

// runWorkers runs do for the operation numbers from..from+count-1 on conc
// goroutines, each taking the next number, until all are done or deadline
// passes (each goroutine checks it before every operation, so the pass
// overruns by at most one operation per goroutine). It returns the latency
// of every operation done.
func runWorkers(ctx context.Context, conc, from, count int, deadline time.Time, do func(ctx context.Context, w, i int) error) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      = make([]time.Duration, 0, count)
		firstErr error
	)
	next.Store(int64(from))
	end := int64(from + count)
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, count/conc+1)
			defer func() {
				mu.Lock()
				all = append(all, lat...)
				mu.Unlock()
			}()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				i := next.Add(1) - 1
				if i >= end {
					return
				}
				t0 := time.Now()
				if err := do(ctx, w, int(i)); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("operation %d: %w", i, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				lat = append(lat, time.Since(t0))
			}
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return all, firstErr
}

// printBreakdown prints Redis's time per operation in each command of
// per (its calls per operation too), dearest first, to stderr.
func printBreakdown(name string, per map[string]redisserver.CommandStat, n int) {
	names := make([]string, 0, len(per))
	for k, c := range per {
		if c.Calls > 0 && !strings.HasPrefix(k, "info") && !strings.HasPrefix(k, "config") {
			names = append(names, k)
		}
	}
	sort.Slice(names, func(i, j int) bool { return per[names[i]].Usecs > per[names[j]].Usecs })
	var b strings.Builder
	fmt.Fprintf(&b, "breakdown %s:", name)
	for _, k := range names {
		c := per[k]
		fmt.Fprintf(&b, " %s %.2fµs×%.2f", k, float64(c.Usecs)/float64(n), float64(c.Calls)/float64(n))
	}
	fmt.Fprintln(os.Stderr, b.String())
}
