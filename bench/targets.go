package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// target is one target of issue 6 evaluated against the measured rows.
type target struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	// Status is "pass", "miss" or "not measured".
	Status string `json:"status"`
	// By says by how much the goal is missed or met.
	By string `json:"by"`
}

const (
	statusPass = "pass"
	statusMiss = "miss"
	statusNA   = "not measured"
)

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

// evaluateTargets evaluates every target of issue 6. skipped lists the peers
// that could not run.
func evaluateTargets(rows []Row, mem memoryResult, skipped []peerSkip) []target {
	var out []target
	limit1, haveLimit1 := findRow(rows, implLimit, opEvalSha, 1)

	// 1. Latency at concurrency 1 against the limit.
	for _, op := range []string{"Put", "PutWrites", "GetTuple.latest", "GetTuple.byid"} {
		t := target{Name: op + " p50 at concurrency 1", Goal: "≤ 1.5 × the limit's EVALSHA p50", Status: statusNA}
		r, ok := findRow(rows, implOurs, op, 1)
		if ok && haveLimit1 && r.P50us.Valid() && limit1.P50us > 0 {
			ratio := float64(r.P50us / limit1.P50us)
			t.Measured = fmt.Sprintf("%.1f µs vs EVALSHA %.1f µs: %.2f×", r.P50us, limit1.P50us, ratio)
			t.Status, t.By = judge(ratio <= 1.5, fmt.Sprintf("%.2f× over the 1.5× goal (%.1f µs too slow)", ratio/1.5, float64(r.P50us)-1.5*float64(limit1.P50us)),
				fmt.Sprintf("%s headroom", pct(1-ratio/1.5)))
		}
		out = append(out, t)
	}

	// 2. Put throughput at 64 goroutines.
	{
		t := target{Name: "Put throughput at 64 goroutines", Goal: "≥ 0.5 × the limit's EVALSHA throughput at 64", Status: statusNA}
		r, ok1 := findRow(rows, implOurs, "Put", 64)
		l, ok2 := findRow(rows, implLimit, opEvalSha, 64)
		if ok1 && ok2 && r.OpsPerS.Valid() && l.OpsPerS > 0 {
			frac := float64(r.OpsPerS / l.OpsPerS)
			t.Measured = fmt.Sprintf("%.0f ops/s vs EVALSHA %.0f ops/s: %.2f of it", r.OpsPerS, l.OpsPerS, frac)
			t.Status, t.By = judge(frac >= 0.5, fmt.Sprintf("needs %.1f× more throughput (short by %.0f ops/s)", 0.5/frac, 0.5*float64(l.OpsPerS)-float64(r.OpsPerS)),
				fmt.Sprintf("%.2f× the goal", frac/0.5))
		}
		out = append(out, t)
	}

	// 3. Memory per checkpoint.
	{
		t := target{Name: "Redis memory per checkpoint (agent workload)", Goal: "≤ 1.3 × bytes of the values written in the step + 512 B", Status: statusNA}
		if mem.Checkpoints > 0 {
			written := mem.ChangedBytes + mem.WriteBytes
			goal := 1.3*written + 512
			goalChannels := 1.3*mem.ChangedBytes + 512
			t.Measured = fmt.Sprintf("%.0f B per checkpoint; values written per step %.0f B (2 changed channels %.0f B + 6 pending writes %.0f B) → goal %.0f B (%.0f B counting the 2 channels only)",
				mem.PerCheckpoint, written, mem.ChangedBytes, mem.WriteBytes, goal, goalChannels)
			t.Status, t.By = judge(mem.PerCheckpoint <= goal, fmt.Sprintf("%.0f B (%s) over", mem.PerCheckpoint-goal, pct(mem.PerCheckpoint/goal-1)),
				fmt.Sprintf("%.0f B (%s) under", goal-mem.PerCheckpoint, pct(1-mem.PerCheckpoint/goal)))
			if mem.PerCheckpoint > goalChannels {
				t.By += fmt.Sprintf("; against the 2 changed channels alone it is %.0f B over", mem.PerCheckpoint-goalChannels)
			}
		}
		out = append(out, t)
	}

	// 4. Delta channel history.
	{
		t := target{Name: "DeltaChannelHistory over the chain", Goal: "1 round trip and ≥ 20× faster than a GetTuple-per-ancestor walk", Status: statusNA}
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
			t.Measured = fmt.Sprintf("%.2f round trips, %.0f µs; walk %.0f round trips, %.0f µs: %.1f× faster", d.RoundTrips, d.P50us, w.RoundTrips, w.P50us, speed)
			ok := speed >= 20 && d.RoundTrips == 1
			var miss []string
			if d.RoundTrips != 1 {
				miss = append(miss, fmt.Sprintf("%.2f round trips instead of 1", d.RoundTrips))
			}
			if speed < 20 {
				miss = append(miss, fmt.Sprintf("%.1f× instead of 20× (%s short)", speed, pct(1-speed/20)))
			}
			t.Status, t.By = judge(ok, strings.Join(miss, "; "), fmt.Sprintf("%.1f× the 20× goal", speed/20))
		}
		out = append(out, t)
	}

	// 5. Flat reads as history grows.
	for _, op := range []string{"GetTuple.latest", "GetTuple.byid"} {
		out = append(out, flatness(rows, op))
	}

	// 6. Against every peer.
	out = append(out, peerTargets(rows, skipped)...)
	return out
}

// flatness evaluates "op time flat within 20% from 10 to 100,000
// checkpoints" on the history sweep rows of op.
func flatness(rows []Row, op string) target {
	t := target{Name: op + " flat as history grows", Goal: "p50 within 20% from 10 to 100,000 checkpoints", Status: statusNA}
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
		parts = append(parts, fmt.Sprintf("%d: %.1f µs", p.h, p.p50))
		if d := math.Abs(p.p50/base.p50 - 1); d > worst {
			worst, worstH = d, p.h
		}
	}
	last := pts[len(pts)-1].h
	t.Measured = strings.Join(parts, ", ")
	t.Status, t.By = judge(worst <= 0.2, fmt.Sprintf("%s off the %d-checkpoint p50 at %d (goal 20%%)", pct(worst), base.h, worstH),
		fmt.Sprintf("largest deviation %s (at %d)", pct(worst), worstH))
	if last < 100_000 {
		t.By += fmt.Sprintf("; measured up to %d only (-history ...,100000 for the full sweep)", last)
	}
	return t
}

// peerTargets evaluates "higher throughput than every peer on every
// operation": for each peer, every row is compared with redcheck's row of
// the same operation and concurrency.
func peerTargets(rows []Row, skipped []peerSkip) []target {
	var impls []string
	for _, r := range rows {
		if r.Impl != implOurs && r.Impl != implLimit && !slices.Contains(impls, r.Impl) {
			impls = append(impls, r.Impl)
		}
	}
	var out []target
	for _, impl := range impls {
		t := target{Name: "throughput vs " + impl, Goal: "higher ops/s than the peer on every operation", Status: statusNA}
		wins, total := 0, 0
		worst, worstOp := math.Inf(1), ""
		var losses []string
		for _, r := range rows {
			if r.Impl != impl || !r.OpsPerS.Valid() {
				continue
			}
			ours, ok := findRow(rows, implOurs, r.Op, r.Concurrency)
			if !ok || !ours.OpsPerS.Valid() {
				continue
			}
			total++
			ratio := float64(ours.OpsPerS / r.OpsPerS)
			if ratio > 1 {
				wins++
			} else {
				losses = append(losses, fmt.Sprintf("%s c=%d (%.2f×)", r.Op, r.Concurrency, ratio))
			}
			if ratio < worst {
				worst, worstOp = ratio, fmt.Sprintf("%s c=%d", r.Op, r.Concurrency)
			}
		}
		if total > 0 {
			t.Measured = fmt.Sprintf("faster on %d of %d operations; least margin %s at %.2f× the peer's ops/s", wins, total, worstOp, worst)
			t.Status, t.By = judge(wins == total, "slower on "+strings.Join(losses, ", "), fmt.Sprintf("at least %.2f× the peer everywhere", worst))
		}
		out = append(out, t)
	}
	for _, s := range skipped {
		out = append(out, target{Name: "throughput vs " + s.Impl, Goal: "higher ops/s than the peer on every operation",
			Status: statusNA, Measured: "the peer could not run", By: s.Reason})
	}
	return out
}

func judge(ok bool, miss, pass string) (status, by string) {
	if ok {
		return statusPass, pass
	}
	return statusMiss, miss
}

// printTargets writes the targets section.
func printTargets(w io.Writer, ts []target) {
	fmt.Fprintln(w, "targets (issue 6):")
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
