package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// target is one target of issue 14 (and the flatness of issue 6)
// evaluated against the measured rows.
type target struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	// Status is "met", "missed", "not measured", or "reported" (a figure
	// the issue asks to show beside a target, not judged).
	Status string `json:"status"`
	// Value is the measured figure in the goal's terms (a ratio, µs,
	// allocations, bytes, ops/s) and Limit the goal's bound on it.
	Value Num `json:"value"`
	Limit Num `json:"limit"`
	// Margin is how far Value is inside the bound, as a fraction of it:
	// positive when met (0.2: 20% headroom), negative when missed (-0.5:
	// 50% over a maximum, or 50% short of a minimum).
	Margin Num `json:"margin"`
	// By says the margin in words.
	By string `json:"by"`
}

const (
	statusMet      = "met"
	statusMissed   = "missed"
	statusNA       = "not measured"
	statusReported = "reported"
)

// atMost and atLeast judge t's Value against a maximum or a minimum, and
// set Limit, Margin, Status and By (unit follows the numbers in By).
func (t *target) atMost(value, limit float64, unit string) {
	t.Value, t.Limit = Num(value), Num(limit)
	t.Margin = Num((limit - value) / limit)
	if value <= limit {
		t.Status, t.By = statusMet, fmt.Sprintf("met: %s%s against ≤ %s%s, %s headroom", num(value), unit, num(limit), unit, pct(float64(t.Margin)))
		return
	}
	t.Status, t.By = statusMissed, fmt.Sprintf("missed: %s%s against ≤ %s%s, %s over", num(value), unit, num(limit), unit, pct(-float64(t.Margin)))
}

func (t *target) atLeast(value, limit float64, unit string) {
	t.Value, t.Limit = Num(value), Num(limit)
	t.Margin = Num((value - limit) / limit)
	if value >= limit {
		t.Status, t.By = statusMet, fmt.Sprintf("met: %s%s against ≥ %s%s, %s to spare", num(value), unit, num(limit), unit, pct(float64(t.Margin)))
		return
	}
	t.Status, t.By = statusMissed, fmt.Sprintf("missed: %s%s against ≥ %s%s, %s short (needs %.2f× more)", num(value), unit, num(limit), unit, pct(-float64(t.Margin)), limit/value)
}

func newTarget(name, goal string) target {
	return target{Name: name, Goal: goal, Status: statusNA, Value: NA, Limit: NA, Margin: NA}
}

// findRow returns the row of impl, op and concurrency.
func findRow(rows []Row, impl, op string, conc int) (Row, bool) {
	for _, r := range rows {
		if r.Impl == impl && r.Op == op && r.Concurrency == conc {
			return r, true
		}
	}
	return Row{}, false
}

func pct(x float64) string { return strconv.FormatFloat(x*100, 'f', 0, 64) + "%" }

// num formats x with 3 significant digits at most, and no decimals past
// 100.
func num(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// Targets of issue 14 at concurrency 1 (agent workload).
var (
	floorTargetOps = []string{"Put", "GetTuple.latest", "GetTuple.byid", "List.page10"}
	serverTargets  = []struct {
		op string
		us float64
	}{{"Put", 30}, {"GetTuple.latest", 20}, {"GetTuple.byid", 20}, {"PutWrites", 15}}
	allocTargets = []struct {
		op string
		n  float64
	}{{"GetTuple.latest", 300}, {"List.page10", 2000}}
)

// evaluateTargets evaluates every target of issue 14, and the flatness of
// issue 6. skipped lists the peers that could not run.
func evaluateTargets(rows []Row, mem, memOn memoryResult, skipped []peerSkip) []target {
	var out []target

	// 1. p50 against the same-bytes floor.
	for _, op := range floorTargetOps {
		t := newTarget(op+" p50 vs its same-bytes floor", "p50 ≤ 1.5 × the dearer of SET:"+op+" and GET:"+op+" p50 (concurrency 1)")
		if r, ok := findRow(rows, implOurs, op, 1); ok && r.RatioToFloor.Valid() {
			set, _ := findRow(rows, implFloor, floorSet+op, 1)
			get, _ := findRow(rows, implFloor, floorGet+op, 1)
			t.Measured = fmt.Sprintf("%s µs vs floor %s µs (SET of %s B %s µs, GET of %s B %s µs): %.2f×",
				num(float64(r.P50us)), num(float64(r.FloorP50us)), count(set.Sent), num(float64(set.P50us)),
				count(get.Recv), num(float64(get.P50us)), r.RatioToFloor)
			t.atMost(float64(r.RatioToFloor), 1.5, "×")
		}
		out = append(out, t)
	}

	// 2. PutWrites against the no-op script with its arguments.
	{
		t := newTarget("PutWrites p50 vs EVALSHA", "p50 ≤ 1.5 × a no-op EVALSHA with PutWrites's own arguments (concurrency 1)")
		r, ok1 := findRow(rows, implOurs, "PutWrites", 1)
		e, ok2 := findRow(rows, implFloor, floorEvalSha+"PutWrites", 1)
		if ok1 && ok2 && r.P50us.Valid() && e.P50us > 0 {
			x := float64(r.P50us / e.P50us)
			t.Measured = fmt.Sprintf("%s µs vs EVALSHA with its arguments %s µs: %.2f×", num(float64(r.P50us)), num(float64(e.P50us)), x)
			if l, ok := findRow(rows, implLimit, opEvalSha, 1); ok && l.P50us > 0 {
				t.Measured += fmt.Sprintf(" (%.2f× EVALSHA return 1 without arguments, %s µs)", float64(r.P50us/l.P50us), num(float64(l.P50us)))
			}
			t.atMost(x, 1.5, "×")
		}
		out = append(out, t)
	}

	// 3. Server time.
	for _, st := range serverTargets {
		t := newTarget(st.op+" server time", fmt.Sprintf("≤ %.0f µs of Redis time per operation (INFO commandstats, concurrency 1)", st.us))
		if r, ok := findRow(rows, implOurs, st.op, 1); ok && r.ServerUS.Valid() {
			t.Measured = fmt.Sprintf("%s µs; main-thread CPU %s µs", num(float64(r.ServerUS)), num(float64(r.ServerCPUus)))
			if e, ok := findRow(rows, implFloor, floorEvalSha+st.op, 1); ok && e.ServerUS.Valid() {
				t.Measured += fmt.Sprintf(" (a no-op script with its arguments: %s µs)", num(float64(e.ServerUS)))
			}
			t.atMost(float64(r.ServerUS), st.us, " µs")
		}
		out = append(out, t)
	}

	// 4. Put throughput at 64 against SET of the same bytes at 64.
	{
		t := newTarget("Put throughput at 64 callers", "≥ 0.5 × the throughput of SET of the same bytes at 64")
		r, ok1 := findRow(rows, implOurs, "Put", 64)
		s, ok2 := findRow(rows, implFloor, floorSet+"Put", 64)
		if ok1 && ok2 && r.OpsPerS.Valid() && s.OpsPerS > 0 {
			frac := float64(r.OpsPerS / s.OpsPerS)
			t.Measured = fmt.Sprintf("%s ops/s vs SET of %s B %s ops/s: %.2f of it", count(r.OpsPerS), count(s.Sent), count(s.OpsPerS), frac)
			t.atLeast(frac, 0.5, "")
		}
		out = append(out, t)
	}

	// 5. Allocations.
	for _, at := range allocTargets {
		t := newTarget(at.op+" allocations", fmt.Sprintf("≤ %.0f allocations per operation (whole process)", at.n))
		if r, ok := findRow(rows, implOurs, at.op, 1); ok && r.AllocsPerOp.Valid() {
			t.Measured = fmt.Sprintf("%s per operation", count(r.AllocsPerOp))
			t.atMost(float64(r.AllocsPerOp), at.n, "")
		}
		out = append(out, t)
	}

	// 6. Delta channel history.
	out = append(out, deltaTarget(rows))

	// 7. Memory per checkpoint.
	out = append(out, memoryTargets(mem, memOn)...)

	// 8. Flat reads as history grows (issue 6).
	for _, op := range []string{"GetTuple.latest", "GetTuple.byid"} {
		out = append(out, flatness(rows, op))
	}

	// 9. Against the peers.
	out = append(out, peerTargets(rows, skipped)...)
	return out
}

// deltaTarget evaluates "DeltaChannelHistory ≥ 20× faster than the
// GetTuple-per-ancestor walk".
func deltaTarget(rows []Row) target {
	t := newTarget("DeltaChannelHistory vs a GetTuple-per-ancestor walk", "≥ 20× faster (p50), in bounded steps (the bound itself is proven by redissaver's tests)")
	var d, w Row
	var okD, okW bool
	for _, r := range rows {
		if r.Impl != implOurs || r.Concurrency != 1 {
			continue
		}
		if strings.HasPrefix(r.Op, "DeltaChannelHistory/") {
			d, okD = r, true
		}
		if strings.HasPrefix(r.Op, "DeltaChannelHistory.walk/") {
			w, okW = r, true
		}
	}
	if okD && okW && d.P50us > 0 && w.P50us.Valid() {
		speed := float64(w.P50us / d.P50us)
		t.Name += " (" + strings.TrimPrefix(d.Op, "DeltaChannelHistory/") + ")"
		t.Measured = fmt.Sprintf("%s µs in %.0f round trips; walk %s µs in %.0f: %.1f× faster", count(d.P50us), d.RoundTrips, count(w.P50us), w.RoundTrips, speed)
		t.atLeast(speed, 20, "×")
	}
	return t
}

// memoryTargets evaluates "Redis memory per checkpoint ≤ 1.0 × the bytes
// written in the step + 512 B with compression on, and the figure without
// it": on is the fixture written with redissaver.Compression on, off
// without; the bytes written are the values' uncompressed msgpack bytes.
func memoryTargets(off, on memoryResult) []target {
	line := func(mem memoryResult) string {
		written := mem.ChangedBytes + mem.WriteBytes
		return fmt.Sprintf("%s B per checkpoint; written per step %s B (2 changed channels %s B + 6 pending writes %s B) → bound %s B",
			count(Num(mem.PerCheckpoint)), count(Num(written)), count(Num(mem.ChangedBytes)), count(Num(mem.WriteBytes)), count(Num(written+512)))
	}
	tOn := newTarget("Redis memory per checkpoint, compression on", "≤ 1.0 × the bytes of the values written in the step + 512 B")
	if on.Checkpoints > 0 {
		tOn.Measured = line(on)
		tOn.atMost(on.PerCheckpoint, on.ChangedBytes+on.WriteBytes+512, " B")
	}
	tOff := newTarget("Redis memory per checkpoint, compression off", "reported beside the target above, against the same bound")
	if off.Checkpoints > 0 {
		tOff.Measured = line(off)
		tOff.atMost(off.PerCheckpoint, off.ChangedBytes+off.WriteBytes+512, " B")
		tOff.Status = statusReported
	}
	return []target{tOn, tOff}
}

// flatness evaluates "op time flat within 20% from 10 to 100,000
// checkpoints" on the history sweep rows of op.
func flatness(rows []Row, op string) target {
	t := newTarget(op+" flat as history grows", "p50 within 20% from 10 to 100,000 checkpoints (issue 6)")
	type point struct {
		h   int
		p50 float64
	}
	var pts []point
	for _, r := range rows {
		if h, ok := strings.CutPrefix(r.Op, op+"/history="); ok && r.Impl == implOurs && r.P50us.Valid() {
			if n, err := strconv.Atoi(h); err == nil {
				pts = append(pts, point{n, float64(r.P50us)})
			}
		}
	}
	if len(pts) < 2 {
		return t
	}
	slices.SortFunc(pts, func(a, b point) int { return a.h - b.h })
	base := pts[0]
	worst, worstH := 0.0, 0
	var parts []string
	for _, p := range pts {
		parts = append(parts, fmt.Sprintf("%d: %s µs", p.h, num(p.p50)))
		if d := math.Abs(p.p50/base.p50 - 1); d > worst {
			worst, worstH = d, p.h
		}
	}
	t.Measured = strings.Join(parts, ", ") + fmt.Sprintf("; largest deviation %s, at %d", pct(worst), worstH)
	t.atMost(worst, 0.2, "")
	if last := pts[len(pts)-1].h; last < 100_000 {
		t.By += fmt.Sprintf("; measured up to %d only (-history ...,100000 for the full sweep)", last)
	}
	return t
}

// Peers of issue 14's framing.
const (
	peerPostgres = "langgraph-js-postgres"
	peerMemory   = "langgraph-js-memory"
	peerSQLite   = "langgraph-js-sqlite"
	// peerRedcheckJS is redcheck's TypeScript client, run by the peers'
	// program in the same Node process as LangGraph.js's savers.
	peerRedcheckJS = "redcheck-js"
	// bigPayload is the payload from which redcheck must beat even the
	// in-process savers.
	bigPayload = 16 << 10
)

// langgraphSavers are LangGraph.js's savers among the peers, in the order
// the tables of docs/performance.md give them.
var langgraphSavers = []string{peerMemory, peerSQLite, peerPostgres}

// peerScope reports whether an in-process peer must be beaten on op: a
// payload (redcheck's larger direction) of at least 16 KB, or a read of
// more than one checkpoint (List, delta history). Otherwise it wins by
// making no network round trip, which the tables say.
func peerScope(ours Row) bool {
	if strings.HasPrefix(ours.Op, "List.") || strings.HasPrefix(ours.Op, "DeltaChannelHistory") {
		return true
	}
	return ours.Sent.Valid() && ours.Recv.Valid() && max(ours.Sent, ours.Recv) >= bigPayload
}

// peerTargets evaluates, on every operation both sides measured (same
// concurrency): redcheck ≥ 5× the Postgres saver's ops/s everywhere, and
// more ops/s than the in-process MemorySaver and SQLite saver where
// peerScope says so. Other peers are compared on every operation.
func peerTargets(rows []Row, skipped []peerSkip) []target {
	var impls []string
	for _, r := range rows {
		if r.Impl != implOurs && r.Impl != implLimit && r.Impl != implFloor && !slices.Contains(impls, r.Impl) {
			impls = append(impls, r.Impl)
		}
	}
	var out []target
	for _, impl := range impls {
		need, goal := 1.0, "more ops/s than the peer on every operation"
		inProcess := impl == peerMemory || impl == peerSQLite
		switch {
		case impl == peerPostgres:
			need, goal = 5, "≥ 5 × the peer's ops/s on every operation"
		case inProcess:
			goal = "more ops/s than the in-process peer on every operation with a payload ≥ 16 KB or that reads more than one checkpoint"
		}
		t := newTarget("throughput vs "+impl, goal)
		wins, total, outOfScope := 0, 0, 0
		worst, worstOp := math.Inf(1), ""
		var losses, free []string
		for _, r := range rows {
			if r.Impl != impl || !r.OpsPerS.Valid() {
				continue
			}
			ours, ok := findRow(rows, implOurs, r.Op, r.Concurrency)
			if !ok || !ours.OpsPerS.Valid() {
				continue
			}
			x := float64(ours.OpsPerS / r.OpsPerS)
			if inProcess && !peerScope(ours) {
				outOfScope++
				if x <= 1 {
					free = append(free, fmt.Sprintf("%s c=%d (%.2f×)", r.Op, r.Concurrency, x))
				}
				continue
			}
			total++
			if x >= need && x > 1 {
				wins++
			} else {
				losses = append(losses, fmt.Sprintf("%s c=%d (%.2f×)", r.Op, r.Concurrency, x))
			}
			if x < worst {
				worst, worstOp = x, fmt.Sprintf("%s c=%d", r.Op, r.Concurrency)
			}
		}
		if total > 0 {
			t.Measured = fmt.Sprintf("%d of %d operations met; least %s at %.2f× the peer's ops/s", wins, total, worstOp, worst)
			if inProcess {
				t.Measured += fmt.Sprintf("; %d smaller single-checkpoint operations not judged", outOfScope)
			}
			t.atLeast(worst, need, "×")
			if len(losses) > 0 {
				t.By += "; short on " + strings.Join(losses, ", ")
			}
			if len(free) > 0 {
				t.By += "; the peer is faster, with no network round trip, on " + strings.Join(free, ", ")
			}
		}
		out = append(out, t)
	}
	for _, s := range skipped {
		t := newTarget("throughput vs "+s.Impl, "more ops/s than the peer on every operation")
		t.Measured, t.By = "the peer could not run", s.Reason
		out = append(out, t)
	}
	return out
}

// printTargets writes the targets section.
func printTargets(w io.Writer, ts []target) {
	fmt.Fprintln(w, "targets (issue 14):")
	for _, t := range ts {
		fmt.Fprintf(w, "  [%s] %s — goal: %s\n", strings.ToUpper(t.Status), t.Name, t.Goal)
		if t.Measured != "" {
			fmt.Fprintf(w, "      measured: %s\n", t.Measured)
		}
		if t.By != "" {
			fmt.Fprintf(w, "      %s\n", t.By)
		}
	}
}
