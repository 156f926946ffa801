package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/agentloop"
)

func sampleEndToEnd() *endToEnd {
	mk := func(cp string, c int, stepsPerS, usPerStep, p50, clientCPU Num) loopResult {
		r := newLoopResult(cp, c)
		r.Invokes, r.SuperSteps = 100, 2000
		r.SuperStepsPerS, r.USPerStep, r.InvokeP50us, r.InvokeP99us, r.InvokeMeanUS, r.ClientCPUus = stepsPerS, usPerStep, p50, p50*2, p50, clientCPU
		if cp != loopNone {
			r.ServerCPUus, r.ServerUS, r.RoundTrips, r.BytesPerStep = 250, 210, 2.95, 23000
		}
		return r
	}
	e := &endToEnd{Machine: machine{CPU: "cpu", Go: "go1.26", Cores: 2, LoadAvgStart: "1.00 1.00 1.00", LoadAvgEnd: "2.00 2.00 2.00"}, Redis: "7.0.15",
		Date: "2026-11-28T00:00:00Z", Command: "go run ./bench -only superstep", DurationS: 12, StepsPerInvoke: 20,
		Results: []loopResult{
			mk(loopNone, 1, 200000, 5, 100, 6),
			mk(implOurs, 1, 2000, 500, 10000, 280),
			mk(loopNone, 64, 150000, 6.5, 400, 5),
			mk(implOurs, 64, 2500, 400, 500000, 150),
		}}
	fillAdded(e.Results)
	return e
}

func TestFillAdded(t *testing.T) {
	e := sampleEndToEnd()
	want := map[int][2]Num{1: {495, 274}, 64: {393.5, 145}}
	for _, r := range e.Results {
		if r.Checkpointer == loopNone {
			if r.AddedUSPerStep.Valid() || r.AddedClientCPU.Valid() {
				t.Errorf("none at %d has an added time", r.Concurrency)
			}
			continue
		}
		if w := want[r.Concurrency]; r.AddedUSPerStep != w[0] || r.AddedClientCPU != w[1] {
			t.Errorf("at %d: added %v µs, %v µs of CPU; want %v", r.Concurrency, r.AddedUSPerStep, r.AddedClientCPU, w)
		}
	}
	alone := []loopResult{newLoopResult(implOurs, 8)}
	alone[0].USPerStep = 100
	fillAdded(alone)
	if alone[0].AddedUSPerStep.Valid() {
		t.Error("added time without a loop without checkpointer at the same concurrency")
	}
}

func TestLoopInvokes(t *testing.T) {
	for _, c := range []struct{ steps, perAgent, rounds, conc, invokes, wantRounds int }{
		{6000, 4, 20, 1, 300, 20},   // plenty per round
		{6000, 4, 20, 64, 300, 1},   // 300 ≥ 4×64: one round
		{1200, 2, 3, 64, 128, 1},    // at least 2 invokes per agent
		{1200, 2, 3, 1, 60, 3},      // -quick at 1 agent
		{20, 4, 20, 16, 64, 1},      // the fewest
		{40000, 4, 20, 64, 2000, 7}, // rounds of at least 4 invokes per agent
	} {
		inv, r := loopInvokes(c.steps, c.perAgent, c.rounds, c.conc)
		if inv != c.invokes || r != c.wantRounds {
			t.Errorf("loopInvokes(%d, %d, %d, %d) = %d, %d; want %d, %d", c.steps, c.perAgent, c.rounds, c.conc, inv, r, c.invokes, c.wantRounds)
		}
	}
}

// TestLoopResultOf: a pass of invokes gives figures per super-step, but
// the invoke's latencies.
func TestLoopResultOf(t *testing.T) {
	p := &pass{impl: implOurs, conc: 1, meter: &meter{}, acc: sample{
		lats:    []time.Duration{10 * time.Millisecond, 12 * time.Millisecond, 14 * time.Millisecond, 20 * time.Millisecond},
		elapsed: 80 * time.Millisecond, use: usage{sent: 8000, recv: 800, trips: 236}, mallocs: 8000,
		cpu: 40 * time.Millisecond, cpuOK: true, serverCPU: 20_000, serverUS: 16_000, serverOK: true}}
	r, err := loopResultOf(p)
	if err != nil {
		t.Fatal(err)
	}
	steps := 4 * agentloop.StepsPerInvoke
	if r.Invokes != 4 || r.SuperSteps != steps || r.SuperStepsPerS != 1000 || r.USPerStep != 1000 {
		t.Errorf("%d invokes, %d steps, %v/s, %v µs per step", r.Invokes, r.SuperSteps, r.SuperStepsPerS, r.USPerStep)
	}
	if r.InvokeP50us != 12000 || r.InvokeP99us != 20000 || r.InvokeMeanUS != 14000 {
		t.Errorf("invoke p50 %v, p99 %v, mean %v", r.InvokeP50us, r.InvokeP99us, r.InvokeMeanUS)
	}
	if r.ClientCPUus != 500 || r.ServerCPUus != 250 || r.ServerUS != 200 || r.RoundTrips != 2.95 || r.BytesPerStep != 110 || r.AllocsPerStep != 100 {
		t.Errorf("per step: %+v", r)
	}
	none, _ := loopResultOf(&pass{impl: loopNone, conc: 1, acc: sample{lats: []time.Duration{time.Millisecond}, elapsed: time.Millisecond}})
	if none.RoundTrips.Valid() || none.ServerCPUus.Valid() || none.ClientCPUus.Valid() {
		t.Errorf("unmeasured figures of none: %+v", none)
	}
}

func TestEndToEndInPerfBlock(t *testing.T) {
	rows := targetRows()
	fillRatios(rows)
	h := header{Machine: machine{CPU: "cpu", Cores: 2, Go: "go1.26"}, Command: "go run ./bench", Date: "2026-11-24T00:00:00Z"}
	if block := perfBlock(h, rows); strings.Contains(block, "End to end") {
		t.Errorf("an end-to-end table from results without one:\n%s", block)
	}
	h.EndToEnd = sampleEndToEnd()
	block := perfBlock(h, rows)
	if !strings.HasPrefix(block, "**End to end: an agent loop of super-steps**") {
		t.Errorf("the block does not open with the end-to-end table:\n%s", block)
	}
	for _, want := range []string{
		"`go run ./bench -only superstep` on 2026-11-28T00:00:00Z: cpu, 2 cores, go1.26, Redis 7.0.15; load average 1.00 1.00 1.00 at the start, 2.00 2.00 2.00 at the end; 12 s. A run of its own (`-only superstep`), not the one of the tables below",
		"| 1 | none | 2,000 | 200,000 | 5.0 | — | 0.10 · 0.20 | 6.0 | — | — | — |",
		"| 1 | redcheck | 2,000 | 2,000 | 500 | 495 · 274 | 10.0 · 20.0 | 280 | 250 · 210 | 2.95 | 23,000 |",
		"| 64 | redcheck | 2,000 | 2,500 | 400 | 394 · 145 | 500 · 1,000 | 150 | 250 · 210 | 2.95 | 23,000 |",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	h.Command, h.Machine.CPU = h.EndToEnd.Command, h.EndToEnd.Machine.CPU // the pass of a full run
	if block := perfBlock(h, rows); strings.Contains(block, "A run of its own") {
		t.Errorf("the pass of the same run called a run of its own:\n%s", block)
	}
	var buf bytes.Buffer
	printLoopTable(&buf, h.EndToEnd)
	if lines := strings.Count(buf.String(), "\n"); lines != 2+len(h.EndToEnd.Results) {
		t.Errorf("console table of %d lines:\n%s", lines, buf.String())
	}
}

// TestMergeEndToEnd: -only superstep replaces the end-to-end section of
// latest.json and keeps the rest byte for byte; without a latest.json it
// writes one of its own run.
func TestMergeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	rows := sampleRows()
	fillRatios(rows)
	old := header{Machine: machine{CPU: "old cpu"}, Date: "2026-11-25T00:00:00Z", Workload: map[string]any{"threads": 20, "concurrency": []int{1, 64}},
		Memory: memoryResult{Checkpoints: 10, PerCheckpoint: 1234}, Notes: []string{"a note"}}
	before, err := encodeResults(old, rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "latest.json"), before, 0o644); err != nil {
		t.Fatal(err)
	}
	e := sampleEndToEnd()
	fresh := header{Machine: machine{CPU: "new cpu"}, Date: "2026-11-28T00:00:00Z"}
	merged, err := mergeEndToEnd(dir, e, fresh)
	if err != nil {
		t.Fatal(err)
	}
	h, rows2, err := decodeResults(merged)
	if err != nil {
		t.Fatal(err)
	}
	if h.EndToEnd == nil || len(h.EndToEnd.Results) != 4 || h.EndToEnd.Results[1].AddedUSPerStep != 495 {
		t.Fatalf("end to end came back as %+v", h.EndToEnd)
	}
	if h.Machine.CPU != "old cpu" || len(rows2) != len(rows) {
		t.Errorf("the rest of the results changed: %+v, %d rows", h.Machine, len(rows2))
	}
	h.EndToEnd = nil
	again, _ := encodeResults(h, rows2)
	if !bytes.Equal(again, before) {
		t.Errorf("without its end-to-end section the merged file differs:\n%s\nwas\n%s", again, before)
	}
	var raw []json.RawMessage
	var first map[string]map[string]json.RawMessage
	if err := json.Unmarshal(merged, &raw); err != nil || len(raw) == 0 || json.Unmarshal(raw[0], &first) != nil || first["header"]["end_to_end"] == nil {
		t.Errorf("no header.end_to_end in the merged file (%v)", err)
	}

	empty := t.TempDir()
	own, err := mergeEndToEnd(empty, e, fresh)
	if err != nil {
		t.Fatal(err)
	}
	h, rows2, err = decodeResults(own)
	if err != nil || h.Machine.CPU != "new cpu" || h.EndToEnd == nil || len(rows2) != 0 {
		t.Errorf("results of the pass alone: %+v, %d rows, %v", h, len(rows2), err)
	}
	if err := os.WriteFile(filepath.Join(empty, "latest.json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mergeEndToEnd(empty, e, fresh); err == nil {
		t.Error("merged into a latest.json that does not decode")
	}
}

// TestLoopPassWithoutRedis: the loop without a checkpointer runs through
// the harness's passes and gives a result with its figures per super-step.
func TestLoopPassWithoutRedis(t *testing.T) {
	p := &pass{impl: loopNone, conc: 2, maxOps: 6, warmup: 2, budget: 10 * time.Second,
		do: func(ctx context.Context, _, i int) error {
			_, err := agentloop.Invoke(ctx, nil, "t", nil)
			return err
		}}
	interleave(context.Background(), 2, p)
	r, err := loopResultOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Invokes != 6 || r.SuperSteps != 120 || !r.USPerStep.Valid() || !r.InvokeP50us.Valid() || !r.AllocsPerStep.Valid() {
		t.Errorf("result %+v", r)
	}
}

func TestSuperStepFlags(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.only != "" || c.loopSteps != 6000 || c.loopTime != 30*time.Second || c.loopPerAgent != 4 || len(c.loopAgents) != 2 || c.loopAgents[1] != 64 {
		t.Errorf("defaults: %+v", c)
	}
	q, err := parseConfig([]string{"-quick", "-only", "superstep", "-superstep-agents", "8,1"})
	if err != nil {
		t.Fatal(err)
	}
	if q.only != onlySuperStep || q.loopSteps != 1200 || q.loopPerAgent != 2 || q.loopAgents[0] != 1 || q.loopAgents[1] != 8 {
		t.Errorf("quick: %+v", q)
	}
	for _, bad := range [][]string{{"-only", "put"}, {"-superstep-steps", "10"}, {"-superstep-time", "0s"}, {"-superstep-agents", "0"}} {
		if _, err := parseConfig(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
