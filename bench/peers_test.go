package main

import (
	"strings"
	"testing"
)

func TestParsePeerOutput(t *testing.T) {
	in := `{"meta":{"node":"v20.20.2","pg":"8.23.1"}}
{"impl":"langgraph-js-postgres","op":"Put","concurrency":1,"n":53,"ops_per_s":206.2,"p50_us":3935.5,"p99_us":12931.8,"roundtrips_per_op":5,"bytes_per_op":13851.6,"allocs_per_op":null,"ratio_to_limit":null}
{"bytes":{"impl":"langgraph-js-postgres","op":"Put","concurrency":1,"sent":13705.6,"recv":146}}
{"impl":"langgraph-js-memory","op":"Put","concurrency":1,"n":10,"ops_per_s":1000,"p50_us":10,"p99_us":20,"roundtrips_per_op":null,"bytes_per_op":null,"allocs_per_op":null,"ratio_to_limit":null}
{"ran":"langgraph-js-postgres"}
{"skip":{"impl":"langgraph-js-redis","reason":"ERR unknown command 'JSON.SET'"}}
{"note":"something"}
Failed to create index: not JSON

`
	out, err := parsePeerOutput(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 2 {
		t.Fatalf("%d rows, want 2", len(out.rows))
	}
	pg := out.rows[0]
	if pg.Impl != "langgraph-js-postgres" || pg.RoundTrips != 5 || pg.Sent != 13705.6 || pg.Recv != 146 || pg.AllocsPerOp.Valid() {
		t.Errorf("postgres row %+v", pg)
	}
	if mem := out.rows[1]; mem.RoundTrips.Valid() || mem.Sent.Valid() || mem.P50us != 10 {
		t.Errorf("memory row %+v", mem)
	}
	if out.versions["pg"] != "8.23.1" || len(out.ran) != 1 || len(out.skipped) != 1 || out.skipped[0].Reason != "ERR unknown command 'JSON.SET'" {
		t.Errorf("meta/ran/skip: %+v", out)
	}
	if len(out.notes) != 2 || !strings.Contains(out.notes[1], "Failed to create index") {
		t.Errorf("notes %q", out.notes)
	}
}

func TestPeerHistory(t *testing.T) {
	cfg := config{history: []int{10, 100, 1000, 10000}, peerHistory: 1000}
	if got := joinInts(peerHistory(cfg)); got != "10,100,1000" {
		t.Errorf("peer history %s", got)
	}
	cfg.peerHistory = 5
	if got := joinInts(peerHistory(cfg)); got != "10" {
		t.Errorf("peer history below every point: %s", got)
	}
}
