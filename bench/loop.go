package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/graphstate/redcheck/internal/agentloop"
	"github.com/graphstate/redcheck/redissaver"
)

// The end-to-end pass: the agent loop of internal/agentloop (the one
// redissaver's BenchmarkSuperStep runs) on redissaver, and the same loop
// with no checkpointer, at each of -superstep-agents, so that the time the
// checkpointer adds to a super-step is the one minus the other.

const (
	// onlySuperStep is the -only value that runs the end-to-end pass alone.
	onlySuperStep = "superstep"
	// loopNone names the loop without a checkpointer.
	loopNone = "none"
)

// loopWorkload describes the loop in latest.json.
const loopWorkload = "internal/agentloop (redissaver's BenchmarkSuperStep runs the same loop): each invoke of a new thread reads its latest checkpoint (GetTuple), then runs 20 super-steps, each the pending writes of its two tasks (PutWrites ×2, two writes each) and the step's checkpoint (Put, 2 channels changed); the state starts at 10 KB and grows by a 1 KB message per step (to 30 KB), a small channel changes at every step. Every agent (goroutine) runs invokes of new threads one after another; all share one go-redis client. Checkpointer none: the same loop, building the same state, with a checkpointer that keeps nothing"

// loopMetricDocs says how every number of a loopResult is measured.
var loopMetricDocs = map[string]string{
	"super_steps_per_s":                  "super-steps completed / wall time of the pass, all agents together (every invoke runs its 20 super-steps)",
	"us_per_super_step":                  "wall time of the pass / super-steps: 1 / super_steps_per_s, as BenchmarkSuperStep's ns/op; at 1 agent the time of one super-step",
	"added_us_per_super_step":            "us_per_super_step of the checkpointer − that of the loop without one (none) at the same concurrency: the time the checkpointer adds to a super-step",
	"invoke_p50_us":                      "nearest-rank median of the time of one invoke (GetTuple + 20 super-steps), as one agent sees it (pool wait included)",
	"invoke_p99_us":                      "nearest-rank 99th percentile of the same",
	"invoke_mean_us":                     "mean of the same",
	"client_cpu_us_per_super_step":       "getrusage(RUSAGE_SELF) user + system time of the harness's process over the measured chunks / super-steps: the loop, redcheck's client side, go-redis and the Go runtime (GC included), every thread",
	"added_client_cpu_us_per_super_step": "client_cpu_us_per_super_step − that of none at the same concurrency",
	"server_cpu_us_per_super_step":       "INFO cpu used_cpu_user_main_thread + used_cpu_sys_main_thread, read before and after each chunk, / super-steps",
	"server_us_per_super_step":           "INFO commandstats usec of the commands the client sent, read before and after each chunk, / super-steps (Redis's clock; see metrics.server_us_per_op)",
	"roundtrips_per_super_step":          "go-redis hook: one per command sent alone, one per pipeline; connection setup not counted; / super-steps",
	"bytes_per_super_step":               "bytes written + read on the client's net.Conn / super-steps",
	"allocs_per_super_step":              "runtime.MemStats.Mallocs delta over the measured chunks / super-steps (the whole process)",
}

// endToEnd is the end-to-end section of latest.json's header
// ("end_to_end"): its own run (-only superstep updates it alone), the
// workload, and a result per checkpointer and concurrency.
type endToEnd struct {
	Machine        machine           `json:"machine"`
	Redis          string            `json:"redis"`
	Date           string            `json:"date"`
	DurationS      float64           `json:"duration_s"`
	Command        string            `json:"command"`
	Workload       string            `json:"workload"`
	StepsPerInvoke int               `json:"steps_per_invoke"`
	Metrics        map[string]string `json:"metrics"`
	Results        []loopResult      `json:"results"`
	// JS is the same measure on the LangGraph.js runtime (superstep_js.go),
	// nil when Node did not run it.
	JS *superStepJS `json:"js,omitempty"`
	// JSSkipped says why JS is nil.
	JSSkipped string `json:"js_skipped,omitempty"`
	// Targets are issue 38's super-step targets, judged on both.
	Targets []target `json:"targets,omitempty"`
}

// loopResult is one pass of the loop: every figure per super-step, but the
// invoke's latencies.
type loopResult struct {
	Checkpointer   string `json:"checkpointer"` // "redcheck", "redis-floor", "redis-floor-script" or "none"
	Concurrency    int    `json:"concurrency"`  // agents
	Invokes        int    `json:"invokes"`
	SuperSteps     int    `json:"super_steps"`
	SuperStepsPerS Num    `json:"super_steps_per_s"`
	USPerStep      Num    `json:"us_per_super_step"`
	AddedUSPerStep Num    `json:"added_us_per_super_step"`
	InvokeP50us    Num    `json:"invoke_p50_us"`
	InvokeP99us    Num    `json:"invoke_p99_us"`
	InvokeMeanUS   Num    `json:"invoke_mean_us"`
	ClientCPUus    Num    `json:"client_cpu_us_per_super_step"`
	AddedClientCPU Num    `json:"added_client_cpu_us_per_super_step"`
	ServerCPUus    Num    `json:"server_cpu_us_per_super_step"`
	ServerUS       Num    `json:"server_us_per_super_step"`
	RoundTrips     Num    `json:"roundtrips_per_super_step"`
	BytesPerStep   Num    `json:"bytes_per_super_step"`
	AllocsPerStep  Num    `json:"allocs_per_super_step"`
}

// newLoopResult returns a result with every number unmeasured.
func newLoopResult(checkpointer string, conc int) loopResult {
	return loopResult{Checkpointer: checkpointer, Concurrency: conc, SuperStepsPerS: NA, USPerStep: NA, AddedUSPerStep: NA,
		InvokeP50us: NA, InvokeP99us: NA, InvokeMeanUS: NA, ClientCPUus: NA, AddedClientCPU: NA, ServerCPUus: NA, ServerUS: NA,
		RoundTrips: NA, BytesPerStep: NA, AllocsPerStep: NA}
}

// loopInvokes returns the invokes of a pass at conc agents: -superstep-steps
// worth, but at least perAgent per agent, so that the agents run together
// for most of the pass rather than trailing off; and the rounds it is
// interleaved in, each with at least perAgent invokes per agent.
func loopInvokes(steps, perAgent, maxRounds, conc int) (invokes, rounds int) {
	invokes = max(steps/agentloop.StepsPerInvoke, perAgent*conc)
	rounds = max(1, min(maxRounds, invokes/(perAgent*conc)))
	return invokes, rounds
}

// superStepPasses runs the end-to-end pass: at each -superstep-agents level,
// the loop on a fresh redissaver prefix and the loop without a
// checkpointer, interleaved.
func (h *harness) superStepPasses(ctx context.Context, hdr header) (*endToEnd, error) {
	started := time.Now()
	e := &endToEnd{Machine: hdr.Machine, Redis: hdr.Redis.Version, Date: started.UTC().Format(time.RFC3339), Command: hdr.Command,
		Workload: loopWorkload, StepsPerInvoke: agentloop.StepsPerInvoke, Metrics: loopMetricDocs}
	e.Machine.LoadAvgStart = loadAvg()
	for _, c := range h.cfg.loopAgents {
		invokes, rounds := loopInvokes(h.cfg.loopSteps, h.cfg.loopPerAgent, h.cfg.rounds, c)
		fmt.Fprintf(h.log, "bench: end to end, %d agents: %d invokes (%d super-steps) with redcheck, redis-floor, redis-floor-script and without a checkpointer, %d rounds\n",
			c, invokes, invokes*agentloop.StepsPerInvoke, rounds)
		s, err := h.newSaver(ctx, h.client, "loop"+strconv.Itoa(c), redissaver.Options{})
		if err != nil {
			return nil, err
		}
		mk := func(name string, cp agentloop.Checkpointer, m *meter) *pass {
			p := &pass{impl: name, op: "invoke", conc: c, maxOps: invokes, warmup: max(2, c), budget: h.cfg.loopTime, meter: m,
				do: func(ctx context.Context, _, i int) error {
					n, err := agentloop.Invoke(ctx, cp, "agent-"+name+"-"+strconv.Itoa(i), nil)
					if err == nil && n != agentloop.StepsPerInvoke {
						err = fmt.Errorf("an invoke ran %d super-steps", n)
					}
					return err
				}}
			if m != nil {
				p.stats = h.ctl
			}
			return p
		}
		floor := floorSaver{c: h.client, prefix: h.prefix("loopfloor" + strconv.Itoa(c))}
		floorLua := floorSaver{c: h.client, prefix: h.prefix("loopfloorlua" + strconv.Itoa(c)), script: true}
		passes := []*pass{mk(loopNone, nil, nil), mk(implOurs, s, h.meter), mk(loopFloor, floor, h.meter), mk(loopFloorScript, floorLua, h.meter)}
		interleave(ctx, rounds, passes...)
		for _, p := range passes {
			r, err := loopResultOf(p)
			if err != nil {
				return nil, err
			}
			e.Results = append(e.Results, r)
		}
	}
	fillAdded(e.Results)
	if h.cfg.peers {
		fmt.Fprintf(h.log, "bench: end to end on LangGraph.js (bench/peers/js/superstep.mjs): concurrency %s, durability %s\n",
			joinInts(h.cfg.jsConc), strings.Join(h.cfg.jsDurability, ","))
		e.JS, e.JSSkipped = runSuperStepJS(ctx, h.cfg, h.redisURL, h.log)
	} else {
		e.JSSkipped = "-peers=false"
	}
	e.Targets = superStepTargets(e)
	e.Machine.LoadAvgEnd = loadAvg()
	e.DurationS = time.Since(started).Round(100 * time.Millisecond).Seconds()
	return e, nil
}

// loopResultOf returns the result of a pass of the loop, whose operations
// are invokes of agentloop.StepsPerInvoke super-steps each.
func loopResultOf(p *pass) (loopResult, error) {
	r := newLoopResult(p.impl, p.conc)
	if p.err != nil {
		return r, fmt.Errorf("end to end, %s, %d agents: %w", p.impl, p.conc, p.err)
	}
	a := p.acc
	n := len(a.lats)
	r.Invokes, r.SuperSteps = n, n*agentloop.StepsPerInvoke
	if n == 0 || a.elapsed <= 0 {
		return r, nil
	}
	steps := float64(r.SuperSteps)
	r.SuperStepsPerS = Num(steps / a.elapsed.Seconds())
	r.USPerStep = Num(float64(a.elapsed) / float64(time.Microsecond) / steps)
	var sum time.Duration
	for _, l := range a.lats {
		sum += l
	}
	r.InvokeMeanUS = Num(float64(sum) / float64(time.Microsecond) / float64(n))
	r.InvokeP50us, r.InvokeP99us = latencyStats(a.lats)
	r.AllocsPerStep = Num(float64(a.mallocs) / steps)
	if a.cpuOK {
		r.ClientCPUus = Num(float64(a.cpu) / float64(time.Microsecond) / steps)
	}
	if a.serverOK {
		r.ServerCPUus = Num(a.serverCPU / steps)
		r.ServerUS = Num(a.serverUS / steps)
	}
	if p.meter != nil {
		r.RoundTrips = Num(float64(a.use.trips) / steps)
		r.BytesPerStep = Num(float64(a.use.sent+a.use.recv) / steps)
	}
	return r, nil
}

// fillAdded sets, on every result with a checkpointer, what it adds over the
// loop without one at the same concurrency (NA when either is missing).
func fillAdded(rs []loopResult) {
	base := map[int]loopResult{}
	for _, r := range rs {
		if r.Checkpointer == loopNone {
			base[r.Concurrency] = r
		}
	}
	for i := range rs {
		r := &rs[i]
		r.AddedUSPerStep, r.AddedClientCPU = NA, NA
		b, ok := base[r.Concurrency]
		if r.Checkpointer == loopNone || !ok {
			continue
		}
		if r.USPerStep.Valid() && b.USPerStep.Valid() {
			r.AddedUSPerStep = r.USPerStep - b.USPerStep
		}
		if r.ClientCPUus.Valid() && b.ClientCPUus.Valid() {
			r.AddedClientCPU = r.ClientCPUus - b.ClientCPUus
		}
	}
}

// printLoopTable writes the end-to-end results as an aligned table.
func printLoopTable(w io.Writer, e *endToEnd) {
	if e == nil {
		return
	}
	fmt.Fprintf(w, "end to end: an agent loop of %d super-steps per invoke (per super-step but the invoke's p50 and p99)\n", e.StepsPerInvoke)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "checkpointer\tagents\tsteps\tsteps/s\tµs/step\tadded µs\tinvoke p50 ms\tinvoke p99 ms\tclient cpu µs\tadded cpu µs\tsrv cpu µs\tserver µs\trt/step\tB/step\tallocs/step\t")
	for _, r := range e.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Checkpointer, r.Concurrency, r.SuperSteps,
			fmtNum(r.SuperStepsPerS, 0), fmtNum(r.USPerStep, 1), fmtNum(r.AddedUSPerStep, 1), fmtNum(r.InvokeP50us/1000, 2), fmtNum(r.InvokeP99us/1000, 2),
			fmtNum(r.ClientCPUus, 1), fmtNum(r.AddedClientCPU, 1), fmtNum(r.ServerCPUus, 1), fmtNum(r.ServerUS, 1), fmtNum(r.RoundTrips, 2),
			fmtNum(r.BytesPerStep, 0), fmtNum(r.AllocsPerStep, 0))
	}
	_ = tw.Flush()
}

// writeEndToEnd writes the end-to-end table of the generated block, or
// nothing when the results of h have none (a run before the pass existed).
func writeEndToEnd(b *strings.Builder, h header) {
	e := h.EndToEnd
	if e == nil || len(e.Results) == 0 {
		return
	}
	b.WriteString("**End to end: an agent loop of super-steps** (`internal/agentloop`, the loop `BenchmarkSuperStep` runs too). ")
	fmt.Fprintf(b, "Each invoke of a new thread reads its latest checkpoint (`GetTuple`), then runs %d super-steps: ", e.StepsPerInvoke)
	b.WriteString("the pending writes of two tasks (`PutWrites` ×2, two writes each), then the step's checkpoint (`Put`); ")
	b.WriteString("the state starts at 10 KB and grows by a 1 KB message per step, and a small channel changes at every step. ")
	b.WriteString("Agents run invokes of new threads one after another, sharing one client. ")
	b.WriteString("*None*: the same loop building the same state, with no checkpointer. ")
	b.WriteString("*redis-floor*: each call one plain command in one round trip on the same client (`GetTuple` an `HGET`, `PutWrites` and `Put` an `HSET` of their values as JSON): no script, check, index or event — the least a checkpointer keeping this loop's state in Redis pays; a target it misses too is out of reach of any Redis checkpointer here. *redis-floor-script*: the same, each `HSET` inside a script that does nothing else — the least a checkpointer pays that checks before it writes, atomically in one round trip (on Redis, a script). ")
	b.WriteString("µs per super-step: the pass's wall time over its super-steps (all agents together); ")
	b.WriteString("*added*: the checkpointer's minus none's, the time the checkpointer adds to a super-step (wall time · the harness's CPU). ")
	b.WriteString("Every figure is per super-step but the invoke's p50 and p99.\n\n")
	m := e.Machine
	own := ""
	if e.Command != h.Command || e.Machine.CPU != h.Machine.CPU {
		own = " A run of its own (`-only " + onlySuperStep + "`), not the one of the tables below: compare its figures with each other."
	}
	fmt.Fprintf(b, "`%s` on %s: %s, %d cores, %s, Redis %s; load average %s at the start, %s at the end; %.0f s.%s\n\n",
		e.Command, e.Date, m.CPU, m.Cores, m.Go, e.Redis, m.LoadAvgStart, m.LoadAvgEnd, e.DurationS, own)
	b.WriteString("| agents | checkpointer | super-steps | super-steps/s | µs per super-step | added: µs · client CPU µs | invoke p50 · p99 ms | client CPU µs | Redis CPU µs · Redis µs | round trips | sent + received B |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range e.Results {
		added := "—"
		if r.Checkpointer != loopNone {
			added = us(r.AddedUSPerStep) + " · " + us(r.AddedClientCPU)
		}
		srv := "—"
		if r.ServerCPUus.Valid() || r.ServerUS.Valid() {
			srv = us(r.ServerCPUus) + " · " + us(r.ServerUS)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s · %s | %s | %s | %s | %s |\n", r.Concurrency, r.Checkpointer, count(Num(r.SuperSteps)),
			count(r.SuperStepsPerS), us(r.USPerStep), added, ms(r.InvokeP50us), ms(r.InvokeP99us), us(r.ClientCPUus), srv,
			fmtOrDash(r.RoundTrips, 2), count(r.BytesPerStep))
	}
	b.WriteString("\n")
	writeSuperStepJS(b, e)
}

// printEndToEndJS writes the LangGraph.js table (or why it did not run)
// and the super-step targets.
func printEndToEndJS(w io.Writer, e *endToEnd) {
	if e == nil {
		return
	}
	fmt.Fprintln(w)
	if e.JS != nil {
		printSuperStepJS(w, e.JS)
	} else if e.JSSkipped != "" {
		fmt.Fprintf(w, "end to end on LangGraph.js: not run: %s\n", e.JSSkipped)
	}
	fmt.Fprintln(w)
	printSuperStepTargets(w, e.Targets)
}

// ms formats microseconds as milliseconds: two decimals below 10 ms, one
// below 100, none above.
func ms(n Num) string {
	if !n.Valid() {
		return "—"
	}
	v := n / 1000
	switch {
	case v < 10:
		return fmtNum(v, 2)
	case v < 100:
		return fmtNum(v, 1)
	}
	return count(v)
}

func fmtOrDash(n Num, prec int) string {
	if !n.Valid() {
		return "—"
	}
	return fmtNum(n, prec)
}

// runOnlySuperStep is -only superstep: the end-to-end pass alone, its
// section merged into OUT/latest.json (whose rows and other figures stay:
// they are another run's), or a latest.json of that section alone when
// there is none; then, for the default -out, the generated block of the
// performance document.
func (h *harness) runOnlySuperStep(ctx context.Context, hdr header, stdout io.Writer) error {
	e, err := h.superStepPasses(ctx, hdr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	printLoopTable(stdout, e)
	printEndToEndJS(stdout, e)
	js, err := mergeEndToEnd(h.cfg.out, e, hdr)
	if err != nil {
		return err
	}
	path, err := writeFile(h.cfg.out, "latest.json", js)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote the end_to_end section of %s\n", path)
	if filepath.Clean(h.cfg.out) == filepath.Clean(defaultOut) {
		if err := perfDocFromResults(h.cfg.out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rewrote the generated block of %s\n", perfDocPath)
	}
	return nil
}

// mergeEndToEnd returns dir/latest.json with e as its end-to-end section,
// the rest as it was; or, when there is no such file, results of fresh (the
// header of this run) with e and no rows.
func mergeEndToEnd(dir string, e *endToEnd, fresh header) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, "latest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		fresh.EndToEnd = e
		fresh.Notes = append(fresh.Notes, "only the end-to-end pass ran (-only "+onlySuperStep+")")
		return encodeResults(fresh, nil)
	}
	if err != nil {
		return nil, err
	}
	h, rows, err := decodeResults(b)
	if err != nil {
		return nil, fmt.Errorf("%s/latest.json (not rewritten): %w", dir, err)
	}
	h.EndToEnd = e
	return encodeResults(h, rows)
}
