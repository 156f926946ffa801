// Command bench is redcheck's benchmark harness (issue 6): the agent
// workload against redissaver on a real redis-server, the limit (go-redis
// EVALSHA of a trivial script and HGETALL of a small hash) measured in the
// same run at the same concurrency, the end-to-end agent loop of
// internal/agentloop (what the checkpointer adds to a super-step: the loop
// with redcheck against the loop without a checkpointer), and the
// LangGraph.js savers in bench/peers/js. It prints a table and the
// targets, and writes bench/results/latest.json and
// bench/results/latency.svg.
//
// Run it from the module root: make bench (default sizes, a few minutes),
// make bench-quick (a ~30 s smoke), or go run ./bench -h for the flags. It
// talks only to loopback servers (REDIS_URL, or a redis-server it starts on
// a free port; the Postgres of -pg-url), never to miniredis, and every pass
// is bounded in operations and time.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// harness holds one run.
type harness struct {
	cfg config
	opt redis.Options
	// redisURL is the server measured (the Node harnesses get it too).
	redisURL string
	runID    string
	client   *redis.Client // measured: redcheck
	meter    *meter
	// lclient measures the limit: a client like client, with its own meter.
	lclient *redis.Client
	lmeter  *meter
	ctl     *redis.Client // INFO, cleanup; not measured

	agent      table
	fixture    *fixture
	memory     memoryResult
	memoryOn   memoryResult // the fixture written with compression on
	stateBytes map[string]int
	calibs     []calibration
	rows       []Row
	errs       []error
	log        io.Writer
}

func main() {
	runtime.LockOSThread() // see setParentDeathSignal
	cfg, err := parseConfig(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if cfg.readme {
		if err := perfDocFromResults(cfg.out); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout, log io.Writer) error {
	if cfg.instructions {
		return runInstructions(ctx, cfg, stdout, log)
	}
	started := time.Now()
	load0 := loadAvg()
	redisURL, serverNote := cfg.redisURL, "REDIS_URL"
	if redisURL == "" {
		srv, err := startRedis()
		if err != nil {
			return err
		}
		defer srv.Stop()
		redisURL, serverNote = "redis://"+srv.Addr(), "started by the harness on "+srv.Addr()+" (no persistence)"
	}
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return fmt.Errorf("redis url: %w", err)
	}
	// go-redis's auto mode logs a line per connection to a Redis without
	// maintenance notifications (before 8.2); the harness has no use for them.
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if host, _, _ := net.SplitHostPort(opt.Addr); !isLoopback(host) {
		return fmt.Errorf("redis %s is not on loopback; the benchmark only talks to this machine", opt.Addr)
	}
	breakdown = cfg.breakdown
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var rid [4]byte
	_, _ = rand.Read(rid[:])
	pool := max(slices.Max(cfg.concurrency), slices.Max(cfg.loopAgents))
	h := &harness{cfg: cfg, opt: *opt, redisURL: redisURL, runID: hex.EncodeToString(rid[:]), meter: &meter{}, lmeter: &meter{},
		stateBytes: map[string]int{}, log: log}
	h.client = newClient(*opt, pool, h.meter)
	h.lclient = newClient(*opt, pool, h.lmeter)
	h.ctl = redis.NewClient(opt)
	defer func() {
		if cfg.redisURL != "" {
			h.cleanup(context.WithoutCancel(ctx))
		}
		_ = h.client.Close()
		_ = h.lclient.Close()
		_ = h.ctl.Close()
	}()
	info, err := h.ctl.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("redis at %s: %w", opt.Addr, err)
	}
	hdr := header{
		Machine: machine{CPU: cpuModel(), Cores: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, LoadAvgStart: load0},
		Redis:   redisInfo{Version: infoString(info, "redis_version"), Server: serverNote},
		Date:    started.UTC().Format(time.RFC3339),
		Command: strings.TrimSpace("go run ./bench " + strings.Join(os.Args[1:], " ")),
	}

	if cfg.only == onlySuperStep {
		return h.runOnlySuperStep(ctx, hdr, stdout)
	}
	h.agent = agentTable(cfg.steps)
	phase := func(name string) { fmt.Fprintf(log, "bench: %s (%.0fs)\n", name, time.Since(started).Seconds()) }
	phase(fmt.Sprintf("fixture: %d threads × %d steps, memory per checkpoint", cfg.threads, cfg.steps))
	if err := h.buildFixture(ctx); err != nil {
		return err
	}
	for _, c := range cfg.concurrency {
		phase(fmt.Sprintf("concurrency %d: limit, Put, PutWrites, GetTuple", c))
		if err := h.concurrencyLevel(ctx, c); err != nil {
			return err
		}
	}
	phase(fmt.Sprintf("delta channel history over %d steps", cfg.deltaSteps))
	if err := h.deltaPasses(ctx, cfg.deltaSteps); err != nil {
		return err
	}
	phase("state size sweep")
	if err := h.stateSweep(ctx); err != nil {
		return err
	}
	phase("history sweep")
	if err := h.historySweep(ctx); err != nil {
		return err
	}
	phase("end to end: the agent loop")
	if e, err := h.superStepPasses(ctx, hdr); err != nil {
		h.errs = append(h.errs, err)
		fmt.Fprintln(log, "bench: error:", err)
	} else {
		hdr.EndToEnd = e
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var peers peerOutput
	if cfg.peers {
		phase("peers (bench/peers/js)")
		peers = runPeers(ctx, cfg, redisURL, log)
	} else {
		peers.skipped = append(peers.skipped, peerSkip{"langgraph-js-*", "-peers=false"})
	}
	rows := append(slices.Clone(h.rows), peers.rows...)
	fillRatios(rows)

	hdr.Machine.LoadAvgEnd = loadAvg()
	hdr.DurationS = time.Since(started).Round(100 * time.Millisecond).Seconds()
	hdr.Workload = map[string]any{
		"threads": cfg.threads, "steps": cfg.steps, "channels": len(channels), "changing_per_step": 2,
		"tasks_per_step": 2, "writes_per_task": 3, "max_ops_per_pass": cfg.ops, "max_time_per_pass": cfg.budget.String(),
		"concurrency": cfg.concurrency, "state_sizes": cfg.stateSizes, "state_sweep_bytes": h.stateBytes,
		"history": cfg.history, "delta_steps": cfg.deltaSteps, "state_bytes_at_step_50": h.memory.StateBytesAtS50,
		"superstep_steps": cfg.loopSteps, "superstep_agents": cfg.loopAgents,
		"peer_concurrency": cfg.peerConc, "peer_history": peerHistory(cfg),
		"client": "one go-redis v9 client per implementation, PoolSize = the largest concurrency, RESP3; the limit has its own, identical client",
	}
	hdr.RatioToLimit = ratioDefin
	hdr.RatioToFloor = floorDefin
	hdr.Metrics = metricDocs
	hdr.Memory = h.memory
	hdr.MemoryOn = h.memoryOn
	hdr.Floors = h.calibs
	hdr.Peers = peerInfo{Versions: peers.versions, Ran: peers.ran, Skipped: peers.skipped}
	hdr.Targets = evaluateTargets(rows, h.memory, h.memoryOn, peers.skipped)
	hdr.Notes = append(hdr.Notes, peers.notes...)
	for _, err := range h.errs {
		hdr.Notes = append(hdr.Notes, "error: "+err.Error())
	}

	fmt.Fprintf(stdout, "redcheck benchmark — %s, %d cores, %s, Redis %s (%s), %s, load average %s → %s, %.0fs\n\n",
		hdr.Machine.CPU, hdr.Machine.Cores, hdr.Machine.Go, hdr.Redis.Version, serverNote, hdr.Date,
		hdr.Machine.LoadAvgStart, hdr.Machine.LoadAvgEnd, hdr.DurationS)
	printTable(stdout, rows)
	fmt.Fprintf(stdout, "\n×limit: %s\n×floor: %s\n", ratioDefin, floorDefin)
	for _, m := range []struct {
		name string
		memoryResult
	}{{"compression off", h.memory}, {"compression on", h.memoryOn}} {
		fmt.Fprintf(stdout, "\nmemory, %s: %.0f B of used_memory per checkpoint (%d checkpoints; used_memory_dataset %.0f B each); values written per step %.0f B (changed channels %.0f + pending writes %.0f); state at step 50: %d B\n",
			m.name, m.PerCheckpoint, m.Checkpoints, m.DatasetPerCkpt, m.ChangedBytes+m.WriteBytes, m.ChangedBytes, m.WriteBytes, m.StateBytesAtS50)
	}
	if len(peers.versions) > 0 || len(peers.skipped) > 0 {
		fmt.Fprintln(stdout, "\npeers:")
		for _, k := range sortedKeys(peers.versions) {
			fmt.Fprintf(stdout, "  %s %s\n", k, peers.versions[k])
		}
		for _, s := range peers.skipped {
			fmt.Fprintf(stdout, "  could not run %s: %s\n", s.Impl, s.Reason)
		}
	}
	for _, n := range hdr.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	fmt.Fprintln(stdout)
	if hdr.EndToEnd != nil {
		printLoopTable(stdout, hdr.EndToEnd)
		printEndToEndJS(stdout, hdr.EndToEnd)
		fmt.Fprintln(stdout)
	}
	printTargets(stdout, hdr.Targets)

	js, err := encodeResults(hdr, rows)
	if err != nil {
		return err
	}
	jsonPath, err := writeFile(cfg.out, "latest.json", js)
	if err != nil {
		return err
	}
	subtitle := fmt.Sprintf("%s, %d cores, Redis %s, %s, %s", hdr.Machine.CPU, hdr.Machine.Cores, hdr.Redis.Version, hdr.Machine.Go, hdr.Date)
	svgPath, err := writeFile(cfg.out, "latency.svg", []byte(chartSVG(rows, subtitle)))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s and %s\n", jsonPath, svgPath)
	if filepath.Clean(cfg.out) == filepath.Clean(defaultOut) {
		// From the file, as -readme does: the figures rounded as stored.
		if err := perfDocFromResults(cfg.out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rewrote the generated block of %s\n", perfDocPath)
	}
	if len(h.errs) > 0 {
		return fmt.Errorf("%d passes failed (see the notes)", len(h.errs))
	}
	return nil
}

// runGroup runs passes as one group: every pass's warmup; a calibration
// of each redcheck pass (its bytes and script calls, see calibrate) and
// its same-bytes floor passes; then all of them in interleaved rounds, so
// that the floor is measured on the same server, client and concurrency
// as the operation, under the same load. Every pass also reads its server
// time. It records the rows.
func (h *harness) runGroup(ctx context.Context, rounds int, ps ...*pass) {
	for _, p := range ps {
		p.stats = h.ctl
		p.warm(ctx)
	}
	all := slices.Clone(ps)
	for _, p := range ps {
		if p.impl != implOurs || p.err != nil {
			continue
		}
		cal, err := calibrate(ctx, p, min(100, p.maxOps), h.cfg.budget)
		if err != nil {
			p.err = err
			continue
		}
		all = append(all, h.floorPasses(ctx, p, &cal)...)
		h.calibs = append(h.calibs, cal)
	}
	interleave(ctx, rounds, all...)
	for _, p := range all {
		h.add(p.row())
	}
}

// add records a measured row, or the error of its pass.
func (h *harness) add(row Row, err error) {
	if err != nil {
		h.errs = append(h.errs, err)
		fmt.Fprintln(h.log, "bench: error:", err)
		return
	}
	h.rows = append(h.rows, row)
}

// prefix returns the key prefix of one part of the run:
// "rcbench-<run>-<name>".
func (h *harness) prefix(name string) string { return "rcbench-" + h.runID + "-" + name }

// newSaver returns a saver on client under the prefix of name, with its
// scripts loaded.
func (h *harness) newSaver(ctx context.Context, client *redis.Client, name string, opts redissaver.Options) (*redissaver.Saver, error) {
	opts.Prefix = h.prefix(name)
	opts.AcceptEviction = true
	s, err := redissaver.New(context.Background(), client, opts)
	if err != nil {
		return nil, err
	}
	return s, s.LoadScripts(ctx)
}

// cleanup removes every key of the run from a server the harness did not
// start (SCAN and UNLINK, bounded to a minute).
func (h *harness) cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var cursor uint64
	removed := 0
	for {
		keys, next, err := h.ctl.Scan(ctx, cursor, "rcbench-"+h.runID+"-*", 1000).Result()
		if err != nil {
			fmt.Fprintln(h.log, "bench: cleanup:", err)
			return
		}
		if len(keys) > 0 {
			_ = h.ctl.Unlink(ctx, keys...).Err()
			removed += len(keys)
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	fmt.Fprintf(h.log, "bench: removed %d keys of this run from %s\n", removed, h.opt.Addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// cpuModel returns the CPU model from /proc/cpuinfo, or GOARCH.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// loadAvg returns the 1, 5 and 15 minute load averages, or "".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
