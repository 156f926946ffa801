package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// config is the harness's flags.
type config struct {
	quick       bool
	readme      bool
	redisURL    string
	threads     int
	steps       int
	ops         int
	budget      time.Duration
	rounds      int
	concurrency []int
	stateSizes  []int
	history     []int
	deltaSteps  int
	out         string
	peers       bool
	peerConc    []int
	peerHistory int
	peerTimeout time.Duration
	pgURL       string
	cpuProfile  string
	breakdown   bool
	// only is "" (every pass) or onlySuperStep (the end-to-end pass alone).
	only string
	// The end-to-end pass (loop.go): super-steps per pass, the most time
	// per pass, the concurrency levels, and the fewest invokes per agent.
	loopSteps    int
	loopTime     time.Duration
	loopAgents   []int
	loopPerAgent int
	// The end-to-end pass on the LangGraph.js runtime (superstep_js.go):
	// concurrency levels, durability modes and super-steps per pass.
	jsConc       []int
	jsDurability []string
	jsSteps      int
	jsTime       time.Duration // most time per pass
	jsTimeout    time.Duration // most time for the whole Node harness
	// instructions is the -instructions mode (instructions.go).
	instructions bool
}

const usageText = `usage: go run ./bench [flags]

Runs the agent workload of issue 6 against redcheck on a real redis-server
(REDIS_URL, or one started on a free loopback port), measures the limit
(EVALSHA of a trivial script, HGETALL of a small hash) in the same run, runs
the end-to-end agent loop (internal/agentloop) with redcheck and without a
checkpointer, runs the Node peers in bench/peers/js when node is installed,
prints a table and the targets, and writes OUT/latest.json and
OUT/latency.svg. -only superstep runs the end-to-end loop alone and replaces
its section of OUT/latest.json.

Flags:
`

func parseConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	var c config
	var conc, sizes, hist, peerConc, loopAgents, jsConc, jsDurability string
	fs.BoolVar(&c.quick, "quick", false, "a ~30 s smoke run: small sizes, short passes; writes to a temporary -out unless one is given")
	fs.StringVar(&c.redisURL, "redis-url", os.Getenv("REDIS_URL"), "Redis to measure (default $REDIS_URL; empty: start redis-server on a free loopback port)")
	fs.IntVar(&c.threads, "threads", 20, "T: threads of the agent workload that the reads read")
	fs.IntVar(&c.steps, "steps", 100, "S: super-steps per thread (the full-history read lists all S; at least 20)")
	fs.IntVar(&c.ops, "ops", 2000, "most operations measured per pass")
	fs.DurationVar(&c.budget, "time", time.Second, "most time per pass (a pass stops at -ops or -time, whichever comes first)")
	fs.IntVar(&c.rounds, "rounds", 20, "each pass runs in this many chunks, interleaved with the other passes of its group (the limit's included), so that a change of load hits all alike")
	fs.StringVar(&conc, "concurrency", "1,4,16,64,256", "concurrency sweep: goroutines sharing one client")
	fs.StringVar(&sizes, "state-sizes", "1KB,16KB,128KB,1MB", "state size sweep (Put and latest GetTuple at concurrency 1)")
	fs.StringVar(&hist, "history", "10,100,1000,10000", "history sweep: checkpoints in one thread (add 100000 for the full sweep, ~1 min more)")
	fs.IntVar(&c.deltaSteps, "delta-steps", 1000, "length of the chain DeltaChannelHistory walks")
	fs.StringVar(&c.out, "out", defaultOut, "directory for latest.json and latency.svg (when it is "+defaultOut+", the run also rewrites the generated block of "+perfDocPath+")")
	fs.BoolVar(&c.readme, "readme", false, "measure nothing: rewrite the generated block of "+perfDocPath+" from OUT/latest.json")
	fs.BoolVar(&c.peers, "peers", true, "run the Node peers in bench/peers/js when node is installed")
	fs.StringVar(&peerConc, "peer-concurrency", "1,64", "concurrency levels of the peers' Put, PutWrites and GetTuple")
	fs.IntVar(&c.peerHistory, "peer-history-max", 1000, "largest history point the peers are run at")
	fs.DurationVar(&c.peerTimeout, "peer-timeout", 200*time.Second, "time limit for all the peers together")
	fs.StringVar(&c.pgURL, "pg-url", "postgresql://postgres@127.0.0.1:5432/test", "Postgres of the Postgres peer (loopback only)")
	fs.BoolVar(&c.instructions, "instructions", false, "measure nothing else: count the instructions Redis executes inside its scripts per operation (Put, PutWrites, GetTuple.byid, List.page10, DeltaChannelHistory), on a redis-server run under valgrind's callgrind: a repeatable measure of a script change, compared with OUT/instructions.json, which it then rewrites (needs valgrind; takes a few minutes)")
	fs.BoolVar(&c.breakdown, "breakdown", false, "print, for each concurrency-1 pass, Redis's time per operation in each command (those scripts and transactions run included), to find where server time goes")
	fs.StringVar(&c.only, "only", "", "run one pass alone: "+onlySuperStep+" (the end-to-end agent loop; its section of OUT/latest.json is replaced, the rest kept)")
	fs.IntVar(&c.loopSteps, "superstep-steps", 6000, "end to end: super-steps per pass (invokes of 20), at least 4 invokes per agent (2 with -quick)")
	fs.DurationVar(&c.loopTime, "superstep-time", 30*time.Second, "end to end: most time per pass")
	fs.StringVar(&loopAgents, "superstep-agents", "1,64", "end to end: concurrent agents (goroutines sharing one client)")
	fs.StringVar(&jsConc, "superstep-js-concurrency", "1,64", "end to end on LangGraph.js (bench/peers/js/superstep.mjs, run with the peers): concurrent workers")
	fs.StringVar(&jsDurability, "superstep-js-durability", "sync,async,exit", "end to end on LangGraph.js: durability modes")
	fs.DurationVar(&c.jsTime, "superstep-js-time", 10*time.Second, "end to end on LangGraph.js: most time per pass")
	fs.DurationVar(&c.jsTimeout, "superstep-js-timeout", 10*time.Minute, "end to end on LangGraph.js: time limit for the whole Node harness (results printed before are kept)")
	fs.IntVar(&c.jsSteps, "superstep-js-steps", 1000, "end to end on LangGraph.js: super-steps per pass (invokes of 20), at least 2 invokes per worker")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the harness (redcheck's client side) to this file")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.quick {
		quick := map[string]func(){
			"threads":                  func() { c.threads = 4 },
			"ops":                      func() { c.ops = 300 },
			"rounds":                   func() { c.rounds = 3 },
			"time":                     func() { c.budget = 250 * time.Millisecond },
			"concurrency":              func() { conc = "1,16,64" },
			"state-sizes":              func() { sizes = "1KB,64KB,1MB" },
			"history":                  func() { hist = "10,100,1000" },
			"peer-concurrency":         func() { peerConc = "1" },
			"delta-steps":              func() { c.deltaSteps = 300 },
			"peer-history-max":         func() { c.peerHistory = 100 },
			"peer-timeout":             func() { c.peerTimeout = 60 * time.Second },
			"out":                      func() { c.out = filepath.Join(os.TempDir(), "redcheck-bench-quick") },
			"superstep-steps":          func() { c.loopSteps = 1200 },
			"superstep-time":           func() { c.loopTime = 10 * time.Second },
			"superstep-js-steps":       func() { c.jsSteps = 100 },
			"superstep-js-concurrency": func() { jsConc = "1" },
			"superstep-js-time":        func() { c.jsTime = 2 * time.Second },
			"superstep-js-timeout":     func() { c.jsTimeout = 2 * time.Minute },
		}
		for name, apply := range quick {
			if !set[name] {
				apply()
			}
		}
	}
	c.loopPerAgent = 4
	if c.quick {
		c.loopPerAgent = 2
	}
	var err error
	if c.loopAgents, err = parseInts(loopAgents, parseInt); err != nil {
		return c, fmt.Errorf("-superstep-agents: %w", err)
	}
	if c.jsConc, err = parseInts(jsConc, parseInt); err != nil {
		return c, fmt.Errorf("-superstep-js-concurrency: %w", err)
	}
	for _, d := range strings.Split(jsDurability, ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		if d != "sync" && d != "async" && d != "exit" {
			return c, fmt.Errorf("-superstep-js-durability: %q is not sync, async or exit", d)
		}
		c.jsDurability = append(c.jsDurability, d)
	}
	if c.concurrency, err = parseInts(conc, parseInt); err != nil {
		return c, fmt.Errorf("-concurrency: %w", err)
	}
	if c.stateSizes, err = parseInts(sizes, parseSize); err != nil {
		return c, fmt.Errorf("-state-sizes: %w", err)
	}
	if c.history, err = parseInts(hist, parseInt); err != nil {
		return c, fmt.Errorf("-history: %w", err)
	}
	if c.peerConc, err = parseInts(peerConc, parseInt); err != nil {
		return c, fmt.Errorf("-peer-concurrency: %w", err)
	}
	switch {
	case c.threads < 1 || c.steps < 20 || c.ops < 10 || c.budget <= 0 || c.deltaSteps < 2 || c.rounds < 1:
		return c, fmt.Errorf("need -threads >= 1, -steps >= 20, -ops >= 10, -time > 0, -delta-steps >= 2, -rounds >= 1")
	case c.only != "" && c.only != onlySuperStep:
		return c, fmt.Errorf("-only %q: the one pass that runs alone is %q", c.only, onlySuperStep)
	case c.loopSteps < 20 || c.loopTime <= 0 || slices.Max(c.loopAgents) > 4096 || c.jsSteps < 20 || c.jsTime <= 0 || c.jsTimeout <= 0 || slices.Max(c.jsConc) > 4096 || len(c.jsDurability) == 0:
		return c, fmt.Errorf("need -superstep-steps >= 20, -superstep-time > 0, -superstep-agents <= 4096, -superstep-js-steps >= 20, -superstep-js-concurrency <= 4096, a -superstep-js-durability")
	case !slices.Contains(c.concurrency, 1):
		return c, fmt.Errorf("-concurrency must include 1 (the latency rows and the ratio to the limit need it)")
	case slices.Max(c.concurrency) > 4096 || slices.Max(c.history) > 1_000_000 || slices.Max(c.stateSizes) > 64<<20:
		return c, fmt.Errorf("sizes out of range (concurrency <= 4096, history <= 1,000,000, state <= 64MB)")
	}
	return c, nil
}

// parseInts parses a comma-separated list of positive numbers, sorted and
// without duplicates.
func parseInts(s string, parse func(string) (int, error)) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := parse(f)
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, fmt.Errorf("%q: must be positive", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parseInt(s string) (int, error) {
	return strconv.Atoi(strings.ReplaceAll(s, "_", ""))
}

// parseSize parses "512", "16KB", "1MB" (KB and MB are powers of 1024).
func parseSize(s string) (int, error) {
	u := strings.ToUpper(s)
	mult := 1
	switch {
	case strings.HasSuffix(u, "MB"):
		mult, u = 1<<20, strings.TrimSuffix(u, "MB")
	case strings.HasSuffix(u, "KB"):
		mult, u = 1<<10, strings.TrimSuffix(u, "KB")
	case strings.HasSuffix(u, "B"):
		u = strings.TrimSuffix(u, "B")
	}
	n, err := strconv.Atoi(u)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	return n * mult, nil
}
