package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// The -instructions mode counts the machine instructions Redis executes
// inside its scripts (EVALSHA and EVAL, with every command they call) per
// operation of the agent workload, by running redis-server under valgrind's
// callgrind. Unlike time, the count does not move with the machine's load,
// its clock or the loopback's mood: the same build, data and calls give the
// same count within about 1% (what moves it is the state the calls meet:
// when Lua's garbage collector takes its step, every 50 script calls; the
// length of a stream, the size of a sorted set). It measures a change
// to a script exactly; it says nothing about the client, the network, or
// commands sent outside scripts (GetTuple's predicted reads, the staged
// values of a Put).

// instrRow is one operation's count.
type instrRow struct {
	Op    string  `json:"op"`
	Calls int     `json:"calls_per_round"`
	Instr float64 `json:"instructions_per_call"` // the median of the rounds
	// Rounds holds each round's count per call.
	Rounds []float64 `json:"rounds"`
}

// instrReport is OUT/instructions.json.
type instrReport struct {
	Header struct {
		Redis    string `json:"redis"`
		Valgrind string `json:"valgrind"`
		Date     string `json:"date"`
		Command  string `json:"command"`
		Method   string `json:"method"`
	} `json:"header"`
	Rows []instrRow `json:"rows"`
}

// callgrindRedis is a redis-server running under callgrind, collecting only
// inside the script commands.
type callgrindRedis struct {
	srv      *redisserver.Server
	pid      string
	valgrind string // the valgrind binary
	control  string // the callgrind_control binary
	out      string // callgrind's output file; its dumps are out.1, out.2, ...
}

// startCallgrindRedis starts redis-server under callgrind on a free loopback
// port (through a wrapper script, so that redisserver launches it as it
// launches redis-server). hz 1 and no active rehashing keep Redis's timers
// out of the scripts' counts.
func startCallgrindRedis(ctx context.Context) (*callgrindRedis, error) {
	var bins [3]string
	for i, name := range []string{"valgrind", "callgrind_control", "redis-server"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return nil, fmt.Errorf("-instructions needs %s on PATH (Debian: apt-get install valgrind redis-server): %w", name, err)
		}
		bins[i] = p
	}
	dir, err := os.MkdirTemp("", "rcinstr-")
	if err != nil {
		return nil, err
	}
	c := &callgrindRedis{valgrind: bins[0], control: bins[1], out: filepath.Join(dir, "callgrind.out")}
	wrapper := filepath.Join(dir, "redis-under-callgrind")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --tool=callgrind --callgrind-out-file=%s --collect-atstart=no "+
		"--toggle-collect=evalShaCommand --toggle-collect=evalCommand %s \"$@\"\n", shellQuote(bins[0]), shellQuote(c.out), shellQuote(bins[2]))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return nil, err
	}
	if c.srv, err = redisserver.Start(wrapper, []string{"--hz", "1", "--activerehashing", "no"}); err != nil {
		return nil, fmt.Errorf("redis-server under callgrind: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: c.srv.Addr(), MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	defer func() { _ = rdb.Close() }()
	info, err := rdb.Info(ctx, "server").Result()
	if err == nil {
		c.pid = infoString(info, "process_id")
	}
	if c.pid == "" {
		c.stop()
		return nil, fmt.Errorf("redis-server under callgrind: no process_id in INFO (%v)", err)
	}
	return c, nil
}

// shellQuote quotes s for sh: in single quotes, a single quote within it
// closing the quotes, escaped, and opening them again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (c *callgrindRedis) stop() {
	c.srv.Stop()
	_ = os.RemoveAll(filepath.Dir(c.out))
}

// count runs do n times between a reset of callgrind's counters and a dump
// of them, and returns the instructions the scripts executed per call.
func (c *callgrindRedis) count(n int, do func(i int) error) (float64, error) {
	if err := exec.Command(c.control, "--zero", c.pid).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control --zero: %w", err)
	}
	for i := range n {
		if err := do(i); err != nil {
			return 0, err
		}
	}
	old, _ := filepath.Glob(c.out + ".*")
	if err := exec.Command(c.control, "--dump", c.pid).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control --dump: %w", err)
	}
	// The dump is written by the server's process when it next runs: wait
	// for the new file and for its totals line (written last).
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(c.out + ".*")
		for _, f := range files {
			if slices.Contains(old, f) {
				continue
			}
			fh, err := os.Open(f)
			if err != nil {
				continue
			}
			total, err := callgrindTotal(fh)
			_ = fh.Close()
			if err == nil {
				_ = os.Remove(f)
				return float64(total) / float64(n), nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, errors.New("callgrind wrote no dump within 30 s")
}

// callgrindTotal reads the "totals:" line of a callgrind dump: the count of
// its first event (instructions, Ir, by default).
func callgrindTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "totals:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, errors.New("callgrind dump: empty totals line")
		}
		return strconv.ParseInt(fields[0], 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("callgrind dump: no totals line (not written yet?)")
}

// instrOp is one operation the mode counts: calls per round, and the call.
type instrOp struct {
	op    string
	calls int
	do    func(ctx context.Context, i int) error
}

// runInstructions is the -instructions mode: it writes the agent workload's
// fixture (4 threads of S steps) and the delta chain on a redis-server under
// callgrind, counts each operation's script instructions in 3 rounds (the
// operations interleaved), prints them beside those of OUT/instructions.json
// when it exists, and then rewrites that file.
func runInstructions(ctx context.Context, cfg config, stdout, log io.Writer) error {
	if cfg.redisURL != "" {
		return errors.New("-instructions starts its own redis-server under valgrind; unset -redis-url / REDIS_URL")
	}
	cg, err := startCallgrindRedis(ctx)
	if err != nil {
		return err
	}
	defer cg.stop()
	opt := redis.Options{Addr: cg.srv.Addr(), Protocol: 3,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}
	var rid [4]byte
	_, _ = rand.Read(rid[:])
	h := &harness{cfg: cfg, opt: opt, runID: hex.EncodeToString(rid[:]), meter: &meter{}, log: log}
	h.client = newClient(opt, 1, h.meter)
	defer func() { _ = h.client.Close() }()

	fmt.Fprintf(log, "instructions: writing the fixture under callgrind (slow: ~50x)\n")
	tab := agentTable(cfg.steps)
	f := &fixture{threads: []string{"agent-0", "agent-1", "agent-2", "agent-3"}}
	if f.saver, err = h.newSaver(ctx, h.client, "fixture", redissaver.Options{}); err != nil {
		return err
	}
	if f.cold, err = h.newSaver(ctx, h.client, "fixture", redissaver.Options{}); err != nil {
		return err
	}
	for _, th := range f.threads {
		ids, err := agentThread(ctx, f.saver, th, tab)
		if err != nil {
			return err
		}
		f.ids = append(f.ids, ids)
	}
	h.fixture = f
	ds, err := h.newSaver(ctx, h.client, "delta", redissaver.Options{})
	if err != nil {
		return err
	}
	head, err := deltaChain(ctx, ds, cfg.deltaSteps)
	if err != nil {
		return err
	}
	ws, err := h.newSaver(ctx, h.client, "writes", redissaver.Options{})
	if err != nil {
		return err
	}
	// Each round's Puts start new threads, and its PutWrites write to that
	// round's checkpoints: every round does the same work.
	var put, writes *pass
	asOp := func(p *pass) func(context.Context, int) error {
		return func(ctx context.Context, i int) error { return p.do(ctx, 0, i) }
	}
	ops := []instrOp{
		{"Put", 300, func(ctx context.Context, i int) error { return put.do(ctx, 0, i) }},
		{"PutWrites", 300, func(ctx context.Context, i int) error { return writes.do(ctx, 0, i) }},
		{"GetTuple.byid", 100, asOp(h.readPass("GetTuple.byid", 1, 0))},
		{"List.page10", 20, asOp(h.readPass("List.page10", 1, 0))},
		{fmt.Sprintf("DeltaChannelHistory/steps=%d", cfg.deltaSteps), 3, func(ctx context.Context, _ int) error {
			_, err := ds.DeltaChannelHistory(ctx, head, []string{"log"})
			return err
		}},
	}
	const rounds = 3
	counts := make([][]float64, len(ops))
	for r := range rounds {
		fmt.Fprintf(log, "instructions: round %d of %d\n", r+1, rounds)
		var writers []*writer
		put, writers = h.putPass(ws, "Put", "put-r"+strconv.Itoa(r), tab, 1, 0, 0)
		writes = h.putWritesPass(ws, tab, writers, 1, 0, 0)
		for k, o := range ops {
			for i := range 2 { // warm-up: scripts loaded, caches filled
				if err := o.do(ctx, r*1000+i); err != nil {
					return fmt.Errorf("%s: %w", o.op, err)
				}
			}
			n, err := cg.count(o.calls, func(i int) error { return o.do(ctx, r*1000+2+i) })
			if err != nil {
				return fmt.Errorf("%s: %w", o.op, err)
			}
			counts[k] = append(counts[k], n)
		}
	}

	var rep instrReport
	rep.Header.Redis = redisVersion(ctx, h.client)
	if out, err := exec.Command(cg.valgrind, "--version").Output(); err == nil {
		rep.Header.Valgrind = strings.TrimSpace(string(out))
	}
	rep.Header.Date = time.Now().UTC().Format(time.RFC3339)
	rep.Header.Command = "go run ./bench " + strings.Join(os.Args[1:], " ")
	rep.Header.Method = fmt.Sprintf("instructions Redis executed inside EVALSHA/EVAL (callgrind --toggle-collect), per call, "+
		"median of %d rounds; agent workload (%d steps per thread), redis-server --hz 1 --activerehashing no", rounds, cfg.steps)
	for k, o := range ops {
		rep.Rows = append(rep.Rows, instrRow{Op: o.op, Calls: o.calls, Instr: median(counts[k]), Rounds: counts[k]})
	}
	path := filepath.Join(cfg.out, "instructions.json")
	var base instrReport
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &base)
	}
	printInstructions(stdout, rep, base)
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// printInstructions prints rep's counts, beside base's where it has the
// same operation.
func printInstructions(w io.Writer, rep, base instrReport) {
	was := map[string]float64{}
	for _, r := range base.Rows {
		was[r.Op] = r.Instr
	}
	fmt.Fprintf(w, "script instructions per call (%s; %s)\n", rep.Header.Redis, rep.Header.Method)
	fmt.Fprintf(w, "%-32s %14s %14s %9s\n", "op", "instructions", "before", "change")
	for _, r := range rep.Rows {
		if b, ok := was[r.Op]; ok && b > 0 {
			fmt.Fprintf(w, "%-32s %14.0f %14.0f %+8.1f%%\n", r.Op, r.Instr, b, 100*(r.Instr-b)/b)
		} else {
			fmt.Fprintf(w, "%-32s %14.0f %14s %9s\n", r.Op, r.Instr, "-", "-")
		}
	}
}

// median returns the median of xs (the mean of the middle two for an even
// count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// redisVersion returns "Redis <version>" from INFO server, or "Redis".
func redisVersion(ctx context.Context, c *redis.Client) string {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "Redis"
	}
	return "Redis " + infoString(info, "redis_version")
}
