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

func TestEvaluateTargets(t *testing.T) {
	mk := func(impl, op string, c int, ops, p50, rt Num) Row {
		r := newRow(impl, op, c)
		r.OpsPerS, r.P50us, r.RoundTrips = ops, p50, rt
		return r
	}
	rows := []Row{
		mk(implLimit, opEvalSha, 1, 40000, 20, 1),
		mk(implOurs, "Put", 1, 8000, 29, 1),       // 1.45×: pass
		mk(implOurs, "PutWrites", 1, 8000, 40, 1), // 2×: miss
		mk(implOurs, "GetTuple.latest", 1, 8000, 30, 1),
		// GetTuple.byid not measured
		mk(implLimit, opEvalSha, 64, 100000, 600, 1),
		mk(implOurs, "Put", 64, 40000, 1500, 1), // 0.4: miss
		mk(implOurs, "DeltaChannelHistory/steps=1000", 1, 100, 1000, 1),
		mk(implOurs, "DeltaChannelHistory.walk/steps=1000", 1, 4, 25000, 1000), // 25×: pass
		mk(implOurs, "GetTuple.latest/history=10", 1, 0, 100, 1),
		mk(implOurs, "GetTuple.latest/history=100000", 1, 0, 119, 1), // 19%: pass
		mk(implOurs, "GetTuple.byid/history=10", 1, 0, 100, 1),
		mk(implOurs, "GetTuple.byid/history=1000", 1, 0, 130, 1), // 30%: miss, and not to 100,000
		mk("peer-a", "Put", 1, 100, 5000, 5),                     // we are faster
		mk("peer-a", "PutWrites", 1, 100, 5000, 5),
		mk("peer-b", "Put", 1, 9000, 10, NA), // peer-b is faster on Put
		mk("peer-b", "Unknown", 1, 9000, 10, NA),
	}
	mem := memoryResult{Checkpoints: 100, PerCheckpoint: 2000, ChangedBytes: 1000, WriteBytes: 100} // goal 1.3*1100+512 = 1942: miss by 58
	ts := evaluateTargets(rows, mem, []peerSkip{{"peer-c", "needs modules"}})
	want := map[string]string{
		"Put p50":              statusPass,
		"PutWrites p50":        statusMiss,
		"GetTuple.latest p50":  statusPass,
		"GetTuple.byid p50":    statusNA,
		"Put throughput at 64": statusMiss,
		"Redis memory":         statusMiss,
		"DeltaChannelHistory":  statusPass,
		"GetTuple.latest flat": statusPass,
		"GetTuple.byid flat":   statusMiss,
		"throughput vs peer-a": statusPass,
		"throughput vs peer-b": statusMiss,
		"throughput vs peer-c": statusNA,
	}
	for name, status := range want {
		tg, ok := targetByName(ts, name)
		if !ok {
			t.Errorf("no target %q", name)
			continue
		}
		if tg.Status != status {
			t.Errorf("%s: %s (%s; %s), want %s", tg.Name, tg.Status, tg.Measured, tg.By, status)
		}
	}
	if tg, _ := targetByName(ts, "PutWrites p50"); !strings.Contains(tg.By, "1.33× over") {
		t.Errorf("PutWrites miss should say by how much: %q", tg.By)
	}
	if tg, _ := targetByName(ts, "Put throughput at 64"); !strings.Contains(tg.By, "1.2× more") {
		t.Errorf("throughput miss should say by how much: %q", tg.By)
	}
	if tg, _ := targetByName(ts, "Redis memory"); !strings.Contains(tg.By, "58 B") {
		t.Errorf("memory miss should say by how much: %q", tg.By)
	}
	if tg, _ := targetByName(ts, "GetTuple.byid flat"); !strings.Contains(tg.By, "up to 1000 only") {
		t.Errorf("a sweep short of 100,000 should say so: %q", tg.By)
	}
	if tg, _ := targetByName(ts, "throughput vs peer-b"); !strings.Contains(tg.By, "Put c=1") || tg.Measured == "" || strings.Contains(tg.Measured, "of 2") {
		t.Errorf("peer-b: %+v (operations we lack are not compared)", tg)
	}
	if tg, _ := targetByName(ts, "throughput vs peer-c"); tg.By != "needs modules" {
		t.Errorf("a skipped peer keeps its reason: %+v", tg)
	}
	var sb strings.Builder
	printTargets(&sb, ts)
	if !strings.Contains(sb.String(), "[MISS] PutWrites p50") || !strings.Contains(sb.String(), "[NOT MEASURED]") {
		t.Errorf("printed targets:\n%s", sb.String())
	}
}

func TestDeltaTargetNeedsOneRoundTrip(t *testing.T) {
	d := newRow(implOurs, "DeltaChannelHistory/steps=1000", 1)
	d.P50us, d.RoundTrips = 100, 2
	w := newRow(implOurs, "DeltaChannelHistory.walk/steps=1000", 1)
	w.P50us, w.RoundTrips = 100000, 1000
	tg, _ := targetByName(evaluateTargets([]Row{d, w}, memoryResult{}, nil), "DeltaChannelHistory")
	if tg.Status != statusMiss || !strings.Contains(tg.By, "2.00 round trips") {
		t.Errorf("%+v", tg)
	}
}
