package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// The end-to-end pass on the LangGraph.js runtime (issue 38): bench/peers/js/
// superstep.mjs runs a ReAct-style agent graph on no checkpointer,
// redcheck-js, MemorySaver, the SQLite saver and the Postgres saver in one
// Node process, interleaved, at every -superstep-js-concurrency level and
// durability mode; this file runs it, reads its results and judges the
// super-step targets of issue 38 on them and on the Go agent loop.

// jsStepsPerInvoke is superstep.mjs's STEPS_PER_INVOKE.
const jsStepsPerInvoke = 20

// jsWorkload describes the graph in latest.json.
const jsWorkload = "bench/peers/js/superstep.mjs: a ReAct-style agent StateGraph (@langchain/langgraph, MessagesAnnotation) run by the LangGraph.js runtime: an \"agent\" node (a deterministic fake chat model: an AIMessage of ~1 KB with one tool call) and a \"tools\" node (a ToolMessage of ~1 KB), the ninth tool call return-direct; each invoke of a new thread starts from a 10 KB system message and grows to ~30 KB of messages in 20 super-steps (the input step, the start step and 18 node steps, each a checkpoint with durability \"sync\"). Concurrency: that many async workers in one Node process running invokes one after another, sharing one client (redcheck-js: one node-redis client; Postgres: the saver's pg pool). Checkpointer none: the same graph compiled without one"

// jsMetricDocs says how the figures of a jsStepResult are measured.
var jsMetricDocs = map[string]string{
	"super_steps_per_s":                  "super-steps completed (20 per invoke) / wall time of the pass, all workers together",
	"us_per_super_step":                  "wall time of the pass / super-steps",
	"added_us_per_super_step":            "us_per_super_step of the checkpointer − that of none at the same concurrency (same run, interleaved rounds)",
	"invoke_p50_us":                      "nearest-rank median of the time of one graph.invoke (20 super-steps)",
	"invoke_p99_us":                      "nearest-rank 99th percentile of the same",
	"node_cpu_us_per_super_step":         "process.cpuUsage() user + system of the Node process over the measured chunks / super-steps: the runtime, the saver, its client and the kernel's work on its sockets (loopback TCP)",
	"node_sys_cpu_us_per_super_step":     "the system part of the same",
	"added_node_cpu_us_per_super_step":   "node_cpu_us_per_super_step − that of none at the same concurrency",
	"server_cpu_us_per_super_step":       "redcheck-js only: Redis's INFO cpu used_cpu_user_main_thread + used_cpu_sys_main_thread, read before and after each chunk by a second client, / super-steps",
	"server_us_per_super_step":           "redcheck-js only: INFO commandstats usec of every command but INFO over each chunk / super-steps (the commands a script runs included twice: in the script's and in their own)",
	"roundtrips_per_super_step":          "redcheck-js: commands the node-redis client sent (sendCommand wrapped; a MULTI block as one), each a request and its reply; Postgres: node-postgres queries; none for in-process savers",
	"scripts_per_super_step":             "redcheck-js: EVALSHA and EVAL among those commands",
	"calls_per_super_step":               "the saver's put, putWrites and getTuple calls made by the runtime, per super-step",
	"commands_per_super_step":            "redcheck-js: the commands sent, by name",
	"target: time added vs SQLite":       "redcheck-js's added_us_per_super_step ≤ the SQLite saver's, same durability and concurrency",
	"target: time added vs Postgres / 4": "redcheck-js's added_us_per_super_step ≤ 1/4 of the Postgres saver's",
}

// superStepJS is the Node part of the end-to-end section: its run's
// versions, the implementations that could not run, and a result per
// implementation, durability and concurrency.
type superStepJS struct {
	Workload       string            `json:"workload"`
	StepsPerInvoke int               `json:"steps_per_invoke"`
	Metrics        map[string]string `json:"metrics"`
	Versions       map[string]string `json:"versions"`
	Skipped        []peerSkip        `json:"skipped"`
	Notes          []string          `json:"notes"`
	Results        []jsStepResult    `json:"results"`
}

// jsStepResult is one pass of superstep.mjs.
type jsStepResult struct {
	Impl           string             `json:"impl"`
	Durability     string             `json:"durability"` // "" for none
	Concurrency    int                `json:"concurrency"`
	Invokes        int                `json:"invokes"`
	SuperSteps     int                `json:"super_steps"`
	SuperStepsPerS Num                `json:"super_steps_per_s"`
	USPerStep      Num                `json:"us_per_super_step"`
	AddedUSPerStep Num                `json:"added_us_per_super_step"`
	InvokeP50us    Num                `json:"invoke_p50_us"`
	InvokeP99us    Num                `json:"invoke_p99_us"`
	NodeCPUus      Num                `json:"node_cpu_us_per_super_step"`
	NodeSysCPUus   Num                `json:"node_sys_cpu_us_per_super_step"`
	AddedNodeCPU   Num                `json:"added_node_cpu_us_per_super_step"`
	ServerCPUus    Num                `json:"server_cpu_us_per_super_step"`
	ServerUS       Num                `json:"server_us_per_super_step"`
	RoundTrips     Num                `json:"roundtrips_per_super_step"`
	Scripts        Num                `json:"scripts_per_super_step"`
	Calls          map[string]float64 `json:"calls_per_super_step,omitempty"`
	Commands       map[string]float64 `json:"commands_per_super_step,omitempty"`
}

func newJSStepResult() jsStepResult {
	return jsStepResult{SuperStepsPerS: NA, USPerStep: NA, AddedUSPerStep: NA, InvokeP50us: NA, InvokeP99us: NA, NodeCPUus: NA,
		NodeSysCPUus: NA, AddedNodeCPU: NA, ServerCPUus: NA, ServerUS: NA, RoundTrips: NA, Scripts: NA}
}

// parseSuperStepJS reads superstep.mjs's lines.
func parseSuperStepJS(r io.Reader) (*superStepJS, error) {
	out := &superStepJS{Workload: jsWorkload, StepsPerInvoke: jsStepsPerInvoke, Metrics: jsMetricDocs, Versions: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var probe struct {
			Step json.RawMessage   `json:"superstep"`
			Meta map[string]string `json:"meta"`
			Skip *peerSkip         `json:"skip"`
			Note *string           `json:"note"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			out.Notes = append(out.Notes, "unparsed output: "+string(line))
			continue
		}
		switch {
		case probe.Step != nil:
			res := newJSStepResult()
			if err := json.Unmarshal(probe.Step, &res); err != nil {
				return out, fmt.Errorf("superstep result %s: %w", line, err)
			}
			out.Results = append(out.Results, res)
		case probe.Meta != nil:
			for k, v := range probe.Meta {
				out.Versions[k] = v
			}
		case probe.Skip != nil:
			out.Skipped = append(out.Skipped, *probe.Skip)
		case probe.Note != nil:
			out.Notes = append(out.Notes, *probe.Note)
		}
	}
	return out, sc.Err()
}

// runSuperStepJS runs superstep.mjs on redisURL and the Postgres of
// cfg.pgURL (installing the peers' packages first when node_modules is
// missing). It returns nil and the reason when Node cannot run it.
func runSuperStepJS(ctx context.Context, cfg config, redisURL string, log io.Writer) (*superStepJS, string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "node is not installed"
	}
	if _, err := os.Stat(filepath.Join(peersDir, "superstep.mjs")); err != nil {
		return nil, fmt.Sprintf("%s/superstep.mjs not found (run from the module root): %v", peersDir, err)
	}
	if err := installJS(ctx, log); err != nil {
		return nil, err.Error()
	}
	pgURL, pgWhy := postgresFor(ctx, cfg.pgURL, log)
	args := []string{"superstep.mjs", "--redis-url", redisURL, "--pg-url", pgURL, "--pg-skip-reason", pgWhy,
		"--concurrency", joinInts(cfg.jsConc), "--durability", strings.Join(cfg.jsDurability, ","),
		"--steps", strconv.Itoa(cfg.jsSteps), "--per-worker", strconv.Itoa(min(cfg.loopPerAgent, 2)),
		"--time-ms", strconv.FormatInt(cfg.jsTime.Milliseconds(), 10), "--rounds", strconv.Itoa(min(cfg.rounds, 4))}
	pctx, cancel := context.WithTimeout(ctx, cfg.jsTimeout)
	defer cancel()
	cmd := exec.CommandContext(pctx, node, args...)
	cmd.Dir, cmd.Stderr = peersDir, log
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err.Error()
	}
	if err := cmd.Start(); err != nil {
		return nil, "node: " + err.Error()
	}
	out, perr := parseSuperStepJS(stdout)
	werr := cmd.Wait()
	if perr != nil {
		out.Notes = append(out.Notes, "reading superstep.mjs's output: "+perr.Error())
	}
	if werr != nil {
		why := werr.Error()
		if errors.Is(pctx.Err(), context.DeadlineExceeded) {
			why = fmt.Sprintf("stopped at the -superstep-js-timeout of %v", cfg.jsTimeout)
		}
		out.Notes = append(out.Notes, "superstep.mjs: "+why+" (results printed before are kept)")
	}
	return out, ""
}

// findJS returns the result of impl at durability and concurrency.
func (s *superStepJS) find(impl, durability string, conc int) (jsStepResult, bool) {
	if s == nil {
		return jsStepResult{}, false
	}
	for _, r := range s.Results {
		if r.Impl == impl && r.Durability == durability && r.Concurrency == conc {
			return r, true
		}
	}
	return jsStepResult{}, false
}

// Implementations of superstep.mjs.
const (
	jsNone = "none"
	// jsFloor and jsFloorScript are the floor passes (superstep.mjs's
	// FloorSaver): MemorySaver plus one plain HSET per checkpointer call, or
	// one script that only HSETs.
	jsFloor       = "redis-floor"
	jsFloorScript = "redis-floor-script"
	// superStepRedisCPU and superStepTrips are issue 38's bounds per super-step.
	superStepRedisCPU = 60
	superStepTrips    = 2
)

// targetDurabilities are the durability modes the targets judge ("exit"
// writes one checkpoint per invoke and is only reported).
var targetDurabilities = []string{"sync", "async"}

// superStepTargets evaluates issue 38's targets per super-step: for
// redcheck-js at each judged durability and concurrency, the time it adds ≤
// the SQLite saver's and ≤ 1/4 of the Postgres saver's, Redis CPU ≤ 60 µs,
// ≤ 2 round trips; and the same for the Go agent loop (its added time
// against the Node savers' with durability sync, as the loop writes before
// each Put).
func superStepTargets(e *endToEnd) []target {
	var out []target
	js := e.JS
	// The levels the Node harness ran (a level where none of its passes ran
	// has no redcheck-js targets), then the Go loop's.
	concs := map[int]bool{}
	var levels []int
	add := func(c int) {
		if !concs[c] {
			concs[c] = true
			levels = append(levels, c)
		}
	}
	jsLevels := map[int]bool{}
	if js != nil {
		for _, r := range js.Results {
			add(r.Concurrency)
			jsLevels[r.Concurrency] = true
		}
	}
	for _, r := range e.Results {
		add(r.Concurrency)
	}
	skipReason := func(impl string) string {
		if js == nil {
			return "the Node harness did not run"
		}
		for _, s := range js.Skipped {
			if s.Impl == impl {
				return s.Reason
			}
		}
		return "not measured"
	}
	timeTargets := func(who string, added Num, durability string, c int, fl floors) {
		for _, peer := range []struct {
			impl, label string
			share       float64
		}{{peerSQLite, "the SQLite saver's", 1}, {peerPostgres, "1/4 of the Postgres saver's", 0.25}} {
			t := newTarget(fmt.Sprintf("super-step %s %s c=%d: time added ≤ %s", who, durability, c, peer.label),
				fmt.Sprintf("µs a super-step takes more than with no checkpointer ≤ %s (durability %s, concurrency %d)", peer.label, durability, c))
			p, ok := js.find(peer.impl, durability, c)
			switch {
			case !ok || !p.AddedUSPerStep.Valid():
				t.Measured, t.By = "the peer has no result", skipReason(peer.impl)
			case !added.Valid():
				t.Measured = "not measured"
			default:
				limit := float64(p.AddedUSPerStep) * peer.share
				t.Measured = fmt.Sprintf("%s µs added vs %s µs for %s", num(float64(added)), num(float64(p.AddedUSPerStep)), peer.impl)
				if limit <= 0 {
					t.Status, t.Value, t.By = statusReported, added, fmt.Sprintf("not judged: the peer adds %s µs, no positive bound", num(float64(p.AddedUSPerStep)))
					break
				}
				t.atMost(float64(added), limit, " µs")
				besideFloor(&t, fl.plain.AddedUSPerStep, fl.script.AddedUSPerStep, limit, " µs added")
			}
			out = append(out, t)
		}
	}
	serverTargets := func(who, durability string, c int, cpu, trips, scripts Num, fl floors) {
		label := fmt.Sprintf("%s c=%d", durability, c)
		if durability == "" {
			label = fmt.Sprintf("c=%d", c)
		}
		t := newTarget(fmt.Sprintf("super-step %s %s: Redis CPU ≤ %d µs", who, label, superStepRedisCPU), "Redis main-thread CPU per super-step")
		if cpu.Valid() {
			t.Measured = fmt.Sprintf("%s µs per super-step", num(float64(cpu)))
			t.atMost(float64(cpu), superStepRedisCPU, " µs")
			besideFloor(&t, fl.plain.ServerCPUus, fl.script.ServerCPUus, superStepRedisCPU, " µs")
		}
		out = append(out, t)
		t = newTarget(fmt.Sprintf("super-step %s %s: round trips ≤ %d", who, label, superStepTrips), "commands sent per super-step (a request and its reply each)")
		if trips.Valid() {
			t.Measured = fmt.Sprintf("%.2f round trips per super-step", trips)
			if scripts.Valid() {
				t.Measured += fmt.Sprintf(", %.2f of them scripts", scripts)
			}
			t.atMost(float64(trips), superStepTrips, "")
			besideFloor(&t, fl.plain.RoundTrips, fl.script.RoundTrips, superStepTrips, " round trips")
		}
		out = append(out, t)
	}
	for _, c := range levels {
		for _, d := range targetDurabilities {
			r, ok := js.find(peerRedcheckJS, d, c)
			if !ok {
				if jsLevels[c] {
					t := newTarget(fmt.Sprintf("super-step redcheck-js %s c=%d", d, c), "every super-step target")
					t.Measured, t.By = "redcheck-js has no result", skipReason(peerRedcheckJS)
					out = append(out, t)
				}
				continue
			}
			fl := noFloors()
			if f, ok := js.find(jsFloor, d, c); ok {
				fl.plain = f
			}
			if f, ok := js.find(jsFloorScript, d, c); ok {
				fl.script = f
			}
			timeTargets("redcheck-js", r.AddedUSPerStep, d, c, fl)
			out = append(out, cpuBeside(js, r, d, c))
			serverTargets("redcheck-js", d, c, r.ServerCPUus, r.RoundTrips, r.Scripts, fl)
		}
	}
	for _, c := range levels {
		fl := noFloors()
		for _, r := range e.Results {
			if r.Concurrency != c {
				continue
			}
			f := &fl.plain
			switch r.Checkpointer {
			case loopFloor:
			case loopFloorScript:
				f = &fl.script
			default:
				continue
			}
			f.AddedUSPerStep, f.ServerCPUus, f.RoundTrips = r.AddedUSPerStep, r.ServerCPUus, r.RoundTrips
		}
		for _, r := range e.Results {
			if r.Checkpointer != implOurs || r.Concurrency != c {
				continue
			}
			timeTargets("Go loop", r.AddedUSPerStep, "sync", c, fl)
			serverTargets("Go loop", "", c, r.ServerCPUus, r.RoundTrips, NA, fl)
		}
	}
	return out
}

// floors are the floor passes' figures beside one of redcheck's results.
type floors struct{ plain, script jsStepResult }

func noFloors() floors { return floors{newJSStepResult(), newJSStepResult()} }

// besideFloor adds to t, a target on redcheck's figure, the floor passes'
// figures for the same bound (measured in the same run: the same calls, each
// one plain HSET in one round trip, or one script that only HSETs; no check,
// index or event). A bound redis-floor misses too is out of reach of any
// Redis checkpointer of this graph on this machine and client; one that only
// redis-floor-script misses, of any that checks before it writes in one
// atomic round trip (a script): Measured says so.
func besideFloor(t *target, plain, script Num, limit float64, unit string) {
	for _, f := range []struct {
		name  string
		v     Num
		reach string
	}{{jsFloor, plain, "any Redis checkpointer"}, {jsFloorScript, script, "any checkpointer that checks in a script before it writes"}} {
		if !f.v.Valid() {
			continue
		}
		t.Measured += fmt.Sprintf("; %s %s%s", f.name, num(float64(f.v)), unit)
		if float64(f.v) > limit && t.Status == statusMissed && !strings.Contains(t.Measured, "out of reach") {
			t.Measured += fmt.Sprintf(", which misses it too: out of reach of %s here", f.reach)
		}
	}
}

// cpuBeside reports, beside the time targets, the CPU redcheck-js adds to
// a super-step (Node's and Redis's main thread) against the CPU the SQLite
// saver adds (all in the Node process): CPU time, which a loaded machine
// inflates far less than the wall time the targets judge.
func cpuBeside(js *superStepJS, r jsStepResult, durability string, c int) target {
	t := newTarget(fmt.Sprintf("super-step redcheck-js %s c=%d: CPU added (Node + Redis) beside the SQLite saver's", durability, c),
		"reported beside the time targets: CPU time is less sensitive to the machine's load than wall time")
	p, ok := js.find(peerSQLite, durability, c)
	if !ok || !p.AddedNodeCPU.Valid() || !r.AddedNodeCPU.Valid() || !r.ServerCPUus.Valid() {
		return t
	}
	ours := float64(r.AddedNodeCPU + r.ServerCPUus)
	t.Measured = fmt.Sprintf("%s µs (Node %s + Redis %s) vs %s µs for %s", num(ours), num(float64(r.AddedNodeCPU)), num(float64(r.ServerCPUus)),
		num(float64(p.AddedNodeCPU)), peerSQLite)
	if p.AddedNodeCPU > 0 {
		t.atMost(ours, float64(p.AddedNodeCPU), " µs")
	}
	t.Status = statusReported
	return t
}

// printSuperStepTargets writes one line per super-step target: status,
// name, value against limit and margin.
func printSuperStepTargets(w io.Writer, ts []target) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintln(w, "super-step targets (issue 38):")
	for _, t := range ts {
		line := t.By
		if line == "" {
			line = t.Measured
		}
		if t.Measured != "" && t.By != "" {
			line = t.Measured + "; " + t.By
		}
		fmt.Fprintf(w, "  [%s] %s: %s\n", strings.ToUpper(t.Status), t.Name, line)
	}
}

// printSuperStepJS writes the Node results as an aligned table.
func printSuperStepJS(w io.Writer, s *superStepJS) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "end to end on LangGraph.js: an agent graph of %d super-steps per invoke (per super-step but the invoke's p50 and p99)\n", s.StepsPerInvoke)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "checkpointer\tdurability\tc\tsteps\tsteps/s\tµs/step\tadded µs\tinvoke p50 ms\tinvoke p99 ms\tnode cpu µs\tadded cpu µs\tredis cpu µs\trt/step\tscripts\t")
	for _, r := range s.Results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Impl, r.Durability, r.Concurrency, r.SuperSteps,
			fmtNum(r.SuperStepsPerS, 0), fmtNum(r.USPerStep, 0), fmtNum(r.AddedUSPerStep, 0), fmtNum(r.InvokeP50us/1000, 1), fmtNum(r.InvokeP99us/1000, 1),
			fmtNum(r.NodeCPUus, 0), fmtNum(r.AddedNodeCPU, 0), fmtNum(r.ServerCPUus, 0), fmtNum(r.RoundTrips, 2), fmtNum(r.Scripts, 2))
	}
	_ = tw.Flush()
	for _, sk := range s.Skipped {
		fmt.Fprintf(w, "could not run %s: %s\n", sk.Impl, sk.Reason)
	}
	for _, n := range s.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// writeSuperStepJS writes the Node table and the super-step targets of the
// generated block.
func writeSuperStepJS(b *strings.Builder, e *endToEnd) {
	if s := e.JS; s != nil && len(s.Results) > 0 {
		b.WriteString("**End to end on the LangGraph.js runtime** (`bench/peers/js/superstep.mjs`): a ReAct-style agent `StateGraph` — a deterministic fake chat model node ")
		b.WriteString("(an `AIMessage` of ~1 KB with a tool call) and a tool node (a `ToolMessage` of ~1 KB) — ")
		fmt.Fprintf(b, "%d super-steps per invoke of a new thread (the input step, the start step, 18 node steps), the state growing from 10 KB to ~30 KB of messages; ", s.StepsPerInvoke)
		b.WriteString("every checkpointer in one Node process, their passes interleaved in rounds; *none*: the graph compiled without a checkpointer. ")
		b.WriteString("*redis-floor*: LangGraph's MemorySaver plus, for each `put` and each `putWrites`, one plain `HSET` of the bytes MemorySaver stored for the call, awaited: no script, check, index or event — the least a checkpointer keeping this graph's state in Redis pays, on the same client, server and machine; a target that redis-floor misses too is out of reach of any Redis checkpointer here. ")
		b.WriteString("*redis-floor-script*: the same, each `HSET` inside a script that does nothing else — the least a checkpointer pays that checks before it writes, atomically in one round trip (on Redis, a script). ")
		b.WriteString("*Added*: the checkpointer's µs per super-step minus none's at the same concurrency (wall time · Node CPU, which includes the kernel's work on the client's sockets). ")
		b.WriteString("Redis CPU: the server's main thread (redcheck-js and the floors; the Postgres server's CPU is not measured). ")
		b.WriteString("Round trips: commands sent by the node-redis client (redcheck-js, the floors), queries sent by node-postgres (Postgres).\n\n")
		var vs []string
		for _, k := range sortedKeys(s.Versions) {
			vs = append(vs, k+" "+s.Versions[k])
		}
		if len(vs) > 0 {
			b.WriteString("Versions: " + strings.Join(vs, "; ") + ".\n\n")
		}
		b.WriteString("| concurrency | checkpointer | durability | super-steps | super-steps/s | µs per super-step | added: µs · Node CPU µs | invoke p50 · p99 ms | Node CPU µs | Redis CPU µs | round trips (scripts) |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range s.Results {
			added, dur, trips := "—", r.Durability, "—"
			if r.Impl != jsNone {
				added = us(r.AddedUSPerStep) + " · " + us(r.AddedNodeCPU)
			} else {
				dur = "—"
			}
			if r.RoundTrips.Valid() {
				trips = fmtNum(r.RoundTrips, 2)
				if r.Scripts.Valid() {
					trips += " (" + fmtNum(r.Scripts, 2) + ")"
				}
			}
			fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s · %s | %s | %s | %s |\n", r.Concurrency, r.Impl, dur, count(Num(r.SuperSteps)),
				count(r.SuperStepsPerS), us(r.USPerStep), added, ms(r.InvokeP50us), ms(r.InvokeP99us), us(r.NodeCPUus), us(r.ServerCPUus), trips)
		}
		b.WriteString("\n")
		for _, sk := range s.Skipped {
			fmt.Fprintf(b, "Could not run %s: %s.\n\n", sk.Impl, sk.Reason)
		}
	}
	if len(e.Targets) == 0 {
		return
	}
	b.WriteString("**Super-step targets** (issue 38; judged at durability sync and async, each concurrency; the Go loop's added time against the Node savers' at durability sync). Margin: how far inside (+) or outside (−) the bound, as a share of it.\n\n")
	b.WriteString("| target | measured | status | margin |\n|---|---|---|---|\n")
	for _, t := range e.Targets {
		margin := "—"
		if t.Margin.Valid() {
			margin = fmt.Sprintf("%+.0f%%", float64(t.Margin)*100)
		}
		m := t.Measured
		if t.Status == statusNA || t.Status == statusReported {
			m = strings.TrimSuffix(m+"; "+t.By, "; ")
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.Name, m, t.Status, margin)
	}
	b.WriteString("\n")
}
