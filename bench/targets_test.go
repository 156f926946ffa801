package main

import (
	"strings"
	"testing"
)

func targetByName(ts []target, prefix string) (target, bool) {
	for _, t := range ts {
		if strings.HasPrefix(t.Name, prefix) {
			return t, true
		}
	}
	return target{}, false
}

// targetRows is a run in which each target of issue 14 is met or missed
// by a known margin.
func targetRows() []Row {
	mk := func(impl, op string, c int, ops, p50 Num) Row {
		r := newRow(impl, op, c)
		r.OpsPerS, r.P50us, r.RoundTrips, r.Sent, r.Recv = ops, p50, 1, 1000, 100
		return r
	}
	with := func(r Row, f func(*Row)) Row { f(&r); return r }
	return []Row{
		mk(implLimit, opEvalSha, 1, 40000, 20),
		with(mk(implOurs, "Put", 1, 8000, 120), func(r *Row) { r.ServerUS = 24 }), // floor 100: 1.2×, met
		mk(implFloor, floorSet+"Put", 1, 10000, 100),
		mk(implFloor, floorGet+"Put", 1, 50000, 20),
		with(mk(implOurs, "PutWrites", 1, 8000, 60), func(r *Row) { r.ServerUS = 30 }), // 2× its EVALSHA: missed; 30 µs: missed by 100%
		mk(implFloor, floorEvalSha+"PutWrites", 1, 40000, 30),
		with(mk(implOurs, "GetTuple.latest", 1, 8000, 40), func(r *Row) { r.AllocsPerOp = 450; r.Recv = 20000 }), // floor 20: 2×, missed
		mk(implFloor, floorSet+"GetTuple.latest", 1, 50000, 15),
		mk(implFloor, floorGet+"GetTuple.latest", 1, 50000, 20),
		// GetTuple.byid and List.page10 not measured
		mk(implOurs, "Put", 64, 30000, 1500),
		mk(implFloor, floorSet+"Put", 64, 50000, 1000), // 0.6: met
		mk(implOurs, "DeltaChannelHistory/steps=1000", 1, 100, 1000),
		mk(implOurs, "DeltaChannelHistory.walk/steps=1000", 1, 4, 15000), // 15×: missed
		mk(implOurs, "GetTuple.latest/history=10", 1, 0, 100),
		mk(implOurs, "GetTuple.latest/history=100000", 1, 0, 119), // 19%: met
		mk(implOurs, "List.full", 1, 50, 20000),
		mk(peerPostgres, "Put", 1, 1000, 1000),            // 8×: met
		mk(peerPostgres, "GetTuple.latest", 1, 2000, 500), // 4×: missed
		mk(peerMemory, "Put", 1, 9000, 10),                // faster, but Put is small here: not judged
		mk(peerMemory, "GetTuple.latest", 1, 4000, 10),    // 20 KB received: judged, 2×
		mk(peerMemory, "List.full", 1, 40, 10),            // a List: judged, 1.25×
		mk(peerSQLite, "List.full", 1, 100, 10),           // a List, faster than us: missed
	}
}

func TestEvaluateTargets(t *testing.T) {
	mem := memoryResult{Checkpoints: 100, PerCheckpoint: 2000, ChangedBytes: 1000, WriteBytes: 100} // bound 1612: 388 B over
	rows := targetRows()
	fillRatios(rows)
	memOn := memoryResult{Checkpoints: 100, PerCheckpoint: 1100, ChangedBytes: 1000, WriteBytes: 100} // bound 1612: met, 512 B to spare
	ts := evaluateTargets(rows, mem, memOn, []peerSkip{{"peer-c", "needs modules"}})
	want := []struct {
		name, status string
		margin       float64 // checked when status is met or missed
		by           string
	}{
		{"Put p50 vs its same-bytes floor", statusMet, 0.2, "met: 1.20× against ≤ 1.50×, 20% headroom"},
		{"GetTuple.latest p50", statusMissed, -1.0 / 3, "missed: 2.00× against ≤ 1.50×, 33% over"},
		{"GetTuple.byid p50", statusNA, 0, ""},
		{"List.page10 p50", statusNA, 0, ""},
		{"PutWrites p50 vs EVALSHA", statusMissed, -1.0 / 3, "33% over"},
		{"Put server time", statusMet, 0.2, "met: 24.0 µs against ≤ 30.0 µs"},
		{"PutWrites server time", statusMissed, -1, "100% over"},
		{"GetTuple.latest server time", statusNA, 0, ""},
		{"Put throughput at 64", statusMet, 0.2, "20% to spare"},
		{"GetTuple.latest allocations", statusMissed, -0.5, "450 against ≤ 300, 50% over"},
		{"List.page10 allocations", statusNA, 0, ""},
		{"DeltaChannelHistory", statusMissed, -0.25, "needs 1.33× more"},
		{"Redis memory per checkpoint, compression on", statusMet, 512.0 / 1612, "met: 1100 B against ≤ 1612 B"},
		{"Redis memory per checkpoint, compression off", statusReported, -388.0 / 1612, "24% over"},
		{"GetTuple.latest flat", statusMet, 0.05, "met: 0.19 against ≤ 0.20"},
		{"GetTuple.byid flat", statusNA, 0, ""},
		{"throughput vs " + peerPostgres, statusMissed, -0.2, "GetTuple.latest c=1 (4.00×)"},
		{"throughput vs " + peerMemory, statusMet, 0.25, "no network round trip, on Put c=1"},
		{"throughput vs " + peerSQLite, statusMissed, -0.5, "List.full c=1 (0.50×)"},
		{"throughput vs peer-c", statusNA, 0, "needs modules"},
	}
	for _, w := range want {
		tg, ok := targetByName(ts, w.name)
		if !ok {
			t.Errorf("no target %q", w.name)
			continue
		}
		if tg.Status != w.status || !strings.Contains(tg.By, w.by) {
			t.Errorf("%s: %s, %q (%s); want %s, %q", tg.Name, tg.Status, tg.By, tg.Measured, w.status, w.by)
		}
		if w.status == statusNA {
			continue
		}
		if d := float64(tg.Margin) - w.margin; !tg.Margin.Valid() || d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: margin %v, want %v", tg.Name, tg.Margin, w.margin)
		}
	}
	if tg, _ := targetByName(ts, "PutWrites p50"); !strings.Contains(tg.Measured, "3.00× EVALSHA return 1") {
		t.Errorf("PutWrites should show its ratio to the plain EVALSHA too: %q", tg.Measured)
	}
	if tg, _ := targetByName(ts, "throughput vs "+peerMemory); !strings.Contains(tg.Measured, "1 smaller single-checkpoint") {
		t.Errorf("the out-of-scope operations should be counted: %q", tg.Measured)
	}
	var sb strings.Builder
	printTargets(&sb, ts)
	if !strings.Contains(sb.String(), "[MISSED] PutWrites p50") || !strings.Contains(sb.String(), "[NOT MEASURED]") {
		t.Errorf("printed targets:\n%s", sb.String())
	}
}

func TestPeerScope(t *testing.T) {
	for _, c := range []struct {
		op         string
		sent, recv Num
		want       bool
	}{
		{"Put", 14000, 4, false},
		{"Put/state=16KB", 16500, 4, true},
		{"GetTuple.latest", 340, 28000, true},
		{"GetTuple.byid", 340, 9000, false},
		{"List.page10", 260, 1000, true},
		{"DeltaChannelHistory/steps=1000", 300, 3000, true},
		{"PutWrites", NA, NA, false},
	} {
		r := newRow(implOurs, c.op, 1)
		r.Sent, r.Recv = c.sent, c.recv
		if got := peerScope(r); got != c.want {
			t.Errorf("peerScope(%s, %v / %v) = %v, want %v", c.op, c.sent, c.recv, got, c.want)
		}
	}
}
