package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func sampleRows() []Row {
	mk := func(impl, op string, c int, ops, p50 Num) Row {
		r := newRow(impl, op, c)
		r.N, r.OpsPerS, r.P50us, r.P99us = 100, ops, p50, p50*3
		if impl != "langgraph-js-memory" {
			r.RoundTrips, r.Sent, r.Recv, r.BytesPerOp = 1, 100, 20, 120
		}
		return r
	}
	return []Row{
		mk(implLimit, opEvalSha, 1, 40000, 25),
		mk(implLimit, opHGetAll, 1, 42000, 24),
		mk(implOurs, "Put", 1, 5000, 180),
		mk(implOurs, "GetTuple.latest", 1, 6000, 150),
		mk(implOurs, "DeltaChannelHistory/steps=1000", 1, 100, 9000),
		mk("langgraph-js-memory", "Put", 1, 20000, 40),
		mk("langgraph-js-postgres", "Put", 1, 200, 4000),
	}
}

// TestResultsRoundTrip: latest.json is an array whose first element is the
// header and whose other elements are rows in the format.
func TestResultsRoundTrip(t *testing.T) {
	rows := sampleRows()
	fillRatios(rows)
	h := header{Machine: machine{CPU: "test cpu", Cores: 2, Go: "go1.26"}, Redis: redisInfo{Version: "7.0.15"}, Date: "2026-11-22T00:00:00Z",
		Memory: memoryResult{Checkpoints: 10, PerCheckpoint: 1234}, Notes: []string{"a note"}}
	b, err := encodeResults(h, rows)
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("latest.json is not an array of objects: %v\n%s", err, b)
	}
	if len(raw) != len(rows)+1 {
		t.Fatalf("%d elements, want %d", len(raw), len(rows)+1)
	}
	if _, ok := raw[0]["header"]; !ok || len(raw[0]) != 1 {
		t.Errorf("first element %v, want {\"header\": ...}", raw[0])
	}
	keys := []string{"impl", "op", "concurrency", "n", "ops_per_s", "p50_us", "p99_us", "roundtrips_per_op", "bytes_per_op", "allocs_per_op", "ratio_to_limit",
		"sent_per_op", "received_per_op", "server_us_per_op", "server_cpu_us_per_op", "floor_p50_us", "ratio_to_floor"}
	for i, r := range raw[1:] {
		if len(r) != len(keys) {
			t.Errorf("row %d has %d keys, want %d", i, len(r), len(keys))
		}
		for _, k := range keys {
			if _, ok := r[k]; !ok {
				t.Errorf("row %d lacks %q", i, k)
			}
		}
	}
	h2, rows2, err := decodeResults(b)
	if err != nil {
		t.Fatal(err)
	}
	if h2.Machine.CPU != "test cpu" || h2.Memory.PerCheckpoint != 1234 || len(h2.Notes) != 1 {
		t.Errorf("header came back as %+v", h2)
	}
	for i := range rows {
		a, b := rows[i], rows2[i]
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("row %d: %s came back as %s", i, ja, jb)
		}
	}
}

func TestPrintTable(t *testing.T) {
	var buf bytes.Buffer
	printTable(&buf, sampleRows())
	out := buf.String()
	if lines := strings.Count(out, "\n"); lines != len(sampleRows())+1 {
		t.Errorf("%d lines, want a header and %d rows:\n%s", lines, len(sampleRows()), out)
	}
	for _, want := range []string{"p50 µs", "langgraph-js-postgres", "DeltaChannelHistory/steps=1000"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, " -  ") {
		t.Errorf("unmeasured numbers should print as -:\n%s", out)
	}
}

// TestChartSVG: the chart is well-formed XML with one bar per (operation,
// implementation) measured at concurrency 1, on a log axis of whole
// decades.
func TestChartSVG(t *testing.T) {
	rows := sampleRows()
	rows = append(rows, newRow(implOurs, "Put", 64)) // not charted: concurrency 64
	svg := chartSVG(rows, `machine <&> "quotes"`)
	dec := xml.NewDecoder(strings.NewReader(svg))
	bars, texts := 0, []string{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			for _, a := range se.Attr {
				if a.Name.Local == "y" {
					bars++ // legend swatches and bars carry y; the background does not
				}
			}
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts = append(texts, string(cd))
		}
	}
	impls := 4 // limit, redcheck, 2 peers
	if want := len(rows) - 1 + impls; bars != want {
		t.Errorf("%d bars and swatches, want %d", bars, want)
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"10 µs", "100 µs", "1 ms", "10 ms", "EVALSHA", "langgraph-js-postgres", `machine <&> "quotes"`} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks %q", want)
		}
	}
	if strings.Contains(all, "100 ms") {
		t.Errorf("axis goes past the decade of the largest value (9 ms)")
	}
	if empty := chartSVG(nil, ""); !strings.HasPrefix(empty, "<svg") {
		t.Errorf("chart of no rows: %q", empty)
	}
}

func TestDurationLabel(t *testing.T) {
	for us, want := range map[float64]string{1: "1 µs", 25.5: "25.5 µs", 1000: "1 ms", 2500: "2.5 ms", 3e6: "3 s", 123456: "123 ms"} {
		if got := durationLabel(us); got != want {
			t.Errorf("durationLabel(%v) = %q, want %q", us, got, want)
		}
	}
}
