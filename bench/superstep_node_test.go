package main

import (
	"strings"
	"testing"
)

const sampleSuperStepOutput = `{"meta":{"node":"v20.20.2","@langchain/langgraph":"1.7.3"}}
{"skip":{"impl":"langgraph-js-postgres","reason":"Postgres at 127.0.0.1:5432 is unreachable: connect ECONNREFUSED"}}
{"superstep":{"impl":"none","durability":"","concurrency":1,"invokes":10,"super_steps":200,"super_steps_per_s":600,"us_per_super_step":1600,"invoke_p50_us":32000,"invoke_p99_us":40000,"node_cpu_us_per_super_step":1500,"node_sys_cpu_us_per_super_step":20,"server_cpu_us_per_super_step":null,"server_us_per_super_step":null,"roundtrips_per_super_step":null,"scripts_per_super_step":null,"commands_per_super_step":null,"calls_per_super_step":null,"added_us_per_super_step":null,"added_node_cpu_us_per_super_step":null}}
{"superstep":{"impl":"langgraph-js-sqlite","durability":"sync","concurrency":1,"invokes":10,"super_steps":200,"us_per_super_step":2400,"node_cpu_us_per_super_step":2300,"added_us_per_super_step":800,"added_node_cpu_us_per_super_step":800,"calls_per_super_step":{"put":1.05,"putWrites":0.95,"getTuple":0.05}}}
{"superstep":{"impl":"redcheck-js","durability":"sync","concurrency":1,"invokes":10,"super_steps":200,"us_per_super_step":2300,"node_cpu_us_per_super_step":2000,"added_us_per_super_step":700,"added_node_cpu_us_per_super_step":500,"server_cpu_us_per_super_step":150,"roundtrips_per_super_step":2,"scripts_per_super_step":2,"commands_per_super_step":{"EVALSHA":2}}}
{"superstep":{"impl":"redcheck-js","durability":"async","concurrency":1,"invokes":10,"super_steps":200,"us_per_super_step":2700,"added_us_per_super_step":1100,"server_cpu_us_per_super_step":50,"roundtrips_per_super_step":2.5,"scripts_per_super_step":2.5}}
{"superstep":{"impl":"redis-floor","durability":"sync","concurrency":1,"invokes":10,"super_steps":200,"us_per_super_step":2100,"added_us_per_super_step":500,"server_cpu_us_per_super_step":90,"roundtrips_per_super_step":2}}
{"superstep":{"impl":"redis-floor-script","durability":"sync","concurrency":1,"invokes":10,"super_steps":200,"us_per_super_step":2250,"added_us_per_super_step":650,"server_cpu_us_per_super_step":120,"roundtrips_per_super_step":2}}
{"superstep":{"impl":"redis-floor-script","durability":"async","concurrency":1,"invokes":10,"super_steps":200,"us_per_super_step":2250,"added_us_per_super_step":1000,"server_cpu_us_per_super_step":55,"roundtrips_per_super_step":2.2}}
{"note":"something to say"}
not json
`

func TestParseSuperStepJS(t *testing.T) {
	s, err := parseSuperStepJS(strings.NewReader(sampleSuperStepOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 7 || len(s.Skipped) != 1 || len(s.Notes) != 2 || s.Versions["@langchain/langgraph"] != "1.7.3" {
		t.Fatalf("parsed %d results, %d skipped, notes %q, versions %v", len(s.Results), len(s.Skipped), s.Notes, s.Versions)
	}
	none, ok := s.find(jsNone, "", 1)
	if !ok || none.USPerStep != 1600 || none.AddedUSPerStep.Valid() || none.RoundTrips.Valid() {
		t.Errorf("none: %+v", none)
	}
	r, ok := s.find(peerRedcheckJS, "async", 1)
	if !ok || r.AddedUSPerStep != 1100 || r.NodeCPUus.Valid() || r.Scripts != 2.5 {
		t.Errorf("redcheck-js async: %+v", r)
	}
	if _, ok := s.find(peerRedcheckJS, "exit", 1); ok {
		t.Error("found a result that is not there")
	}
}

// sampleTargets judges the sample Go loop and Node results: the end to end
// section, its targets, and the targets by name.
func sampleTargets(t *testing.T) (*endToEnd, []target, map[string]target) {
	t.Helper()
	s, err := parseSuperStepJS(strings.NewReader(sampleSuperStepOutput))
	if err != nil {
		t.Fatal(err)
	}
	e := sampleEndToEnd()
	e.JS = s
	ts := superStepTargets(e)
	got := map[string]target{}
	for _, tg := range ts {
		got[tg.Name] = tg
	}
	return e, ts, got
}

func TestSuperStepTargets(t *testing.T) {
	e, ts, got := sampleTargets(t)
	for _, tg := range ts {
		if !strings.HasPrefix(tg.Name, "super-step ") {
			t.Errorf("target %q does not name the super-step", tg.Name)
		}
	}
	for _, c := range []struct {
		name, status string
		value, limit Num
	}{
		{"super-step redcheck-js sync c=1: time added ≤ the SQLite saver's", statusMet, 700, 800},
		{"super-step redcheck-js async c=1: time added ≤ the SQLite saver's", statusNA, NA, NA}, // SQLite has no async result
		{"super-step redcheck-js sync c=1: time added ≤ 1/4 of the Postgres saver's", statusNA, NA, NA},
		{"super-step redcheck-js sync c=1: Redis CPU ≤ 60 µs", statusMissed, 150, 60},
		{"super-step redcheck-js async c=1: Redis CPU ≤ 60 µs", statusMet, 50, 60},
		{"super-step redcheck-js sync c=1: round trips ≤ 2", statusMet, 2, 2},
		{"super-step redcheck-js async c=1: round trips ≤ 2", statusMissed, 2.5, 2},
		{"super-step Go loop sync c=1: time added ≤ the SQLite saver's", statusMet, 495, 800},
		{"super-step Go loop c=1: Redis CPU ≤ 60 µs", statusMissed, 250, 60},
		{"super-step Go loop c=64: round trips ≤ 2", statusMissed, 2.95, 2},
	} {
		tg, ok := got[c.name]
		if !ok {
			t.Errorf("no target %q", c.name)
			continue
		}
		if tg.Status != c.status || (c.value.Valid() && (tg.Value != c.value || tg.Limit != c.limit)) {
			t.Errorf("%s: %s, %v against %v; want %s, %v against %v", c.name, tg.Status, tg.Value, tg.Limit, c.status, c.value, c.limit)
		}
	}
	if tg := got["super-step redcheck-js sync c=1: time added ≤ 1/4 of the Postgres saver's"]; !strings.Contains(tg.By, "unreachable") {
		t.Errorf("the Postgres target does not say why it was skipped: %q", tg.By)
	}
	var out strings.Builder
	printSuperStepTargets(&out, ts)
	if !strings.Contains(out.String(), "[MET] super-step redcheck-js sync c=1: time added ≤ the SQLite saver's: 700 µs added") ||
		!strings.Contains(out.String(), "[MISSED] super-step redcheck-js sync c=1: Redis CPU ≤ 60 µs: 150 µs per super-step; redis-floor 90.0 µs, which misses it too: out of reach of any Redis checkpointer here; redis-floor-script 120 µs; missed: 150 µs against ≤ 60.0 µs, 150% over") {
		t.Errorf("target lines:\n%s", out.String())
	}
	var doc strings.Builder
	e.Targets = ts
	writeSuperStepJS(&doc, e)
	for _, want := range []string{"| 1 | redcheck-js | async | 200 |", "Could not run langgraph-js-postgres: Postgres at", "| super-step Go loop c=1: Redis CPU ≤ 60 µs | 250 µs per super-step | missed | -317% |"} {
		if !strings.Contains(doc.String(), want) {
			t.Errorf("the generated block lacks %q:\n%s", want, doc.String())
		}
	}
}

// TestSuperStepTargetsBesideFloor: each judged figure of redcheck-js shows
// the floor passes' figures for the same bound, and a target a floor misses
// too says whose reach it is out of.
func TestSuperStepTargetsBesideFloor(t *testing.T) {
	e, _, got := sampleTargets(t)
	for _, c := range []struct{ name, measured string }{
		// Missed, and the floor misses it too.
		{"super-step redcheck-js sync c=1: Redis CPU ≤ 60 µs", "150 µs per super-step; redis-floor 90.0 µs, which misses it too: out of reach of any Redis checkpointer here; redis-floor-script 120 µs"},
		// Missed; only the script floor misses it too.
		{"super-step redcheck-js async c=1: round trips ≤ 2", "; redis-floor-script 2.20 round trips, which misses it too: out of reach of any checkpointer that checks in a script before it writes here"},
		// Met: the floor's figure is shown, nothing said of reach.
		{"super-step redcheck-js sync c=1: time added ≤ the SQLite saver's", "; redis-floor 500 µs added"},
		{"super-step redcheck-js sync c=1: round trips ≤ 2", "; redis-floor 2.00 round trips"},
		// Met at async: only the script floor, which has a result there.
		{"super-step redcheck-js async c=1: Redis CPU ≤ 60 µs", "50.0 µs per super-step; redis-floor-script 55.0 µs"},
	} {
		tg, ok := got[c.name]
		if !ok {
			t.Errorf("no target %q", c.name)
			continue
		}
		if !strings.Contains(tg.Measured, c.measured) {
			t.Errorf("%s: measured %q, want it to hold %q", c.name, tg.Measured, c.measured)
		}
		if !strings.Contains(c.measured, "out of reach") && strings.Contains(tg.Measured, "out of reach") {
			t.Errorf("%s: %q says out of reach", c.name, tg.Measured)
		}
		if c.name == "super-step redcheck-js async c=1: Redis CPU ≤ 60 µs" && strings.Contains(tg.Measured, "redis-floor ") {
			t.Errorf("%s: a floor figure without a floor pass: %q", c.name, tg.Measured)
		}
	}
	// The Go loop's floor comes from its own redis-floor result.
	e.Results = append(e.Results, func() loopResult {
		r := newLoopResult(loopFloor, 1)
		r.AddedUSPerStep, r.ServerCPUus, r.RoundTrips = 300, 80, 2.95
		return r
	}())
	for _, tg := range superStepTargets(e) {
		if tg.Name == "super-step Go loop c=1: round trips ≤ 2" &&
			!strings.Contains(tg.Measured, "redis-floor 2.95 round trips, which misses it too: out of reach of any Redis checkpointer here") {
			t.Errorf("%s: %q", tg.Name, tg.Measured)
		}
	}
}

func TestSuperStepTargetsWithoutNode(t *testing.T) {
	e := sampleEndToEnd()
	e.JSSkipped = "node is not installed"
	for _, tg := range superStepTargets(e) {
		if strings.Contains(tg.Name, "time added") && (tg.Status != statusNA || tg.By != "the Node harness did not run") {
			t.Errorf("%s: %s (%s) without the Node harness", tg.Name, tg.Status, tg.By)
		}
	}
}
