package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceBlock(t *testing.T) {
	doc := "# x\n\nintro\n" + blockBegin + "\nold table\n" + blockEnd + "\n\n## next\n"
	got, err := replaceBlock(doc, "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# x\n\nintro\n" + blockBegin + "\nnew table\n" + blockEnd + "\n\n## next\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	again, _ := replaceBlock(got, "new table\n")
	if again != got {
		t.Error("rewriting with the same block changed the document")
	}
	for _, bad := range []string{"no markers", blockEnd + "\n" + blockBegin} {
		if _, err := replaceBlock(bad, "x"); err == nil {
			t.Errorf("replaceBlock(%q) did not fail", bad)
		}
	}
}

func TestPerfBlock(t *testing.T) {
	rows := targetRows()
	rows = append(rows, newRow(implLimit, opEvalSha, 64))
	fillRatios(rows)
	h := header{Machine: machine{CPU: "cpu", Cores: 2, Go: "go1.26", LoadAvgStart: "1.50 2.00 2.50", LoadAvgEnd: "1.00 1.00 1.00"},
		Command: "go run ./bench", Date: "2026-11-24T00:00:00Z", Redis: redisInfo{Version: "7.0.15"},
		Peers: peerInfo{Skipped: []peerSkip{{"langgraph-js-redis", "ERR unknown command 'JSON.SET'"}}}}
	h.Targets = evaluateTargets(rows, memoryResult{}, memoryResult{}, nil)
	block := perfBlock(h, rows)
	for _, want := range []string{
		"load average 1.50 2.00 2.50 at the start, 1.00 1.00 1.00 at the end",
		"| Put p50 vs its same-bytes floor | ", "| **met** | +20% |", "| **missed** | -33% |",
		"| Put | 120 | ", "| 1.20× | 6.00× |", // the floor row of Put at concurrency 1
		"| Put | 30,000 |", // at 64 callers
		"| EVALSHA | 64 |",
		"| GetTuple.latest | 1 | 40.0 µs · 8,000/s | 20.0 µs | 10.0 µs · 4,000/s (2.00×) | — | 500 µs · 2,000/s (4.00×) |",
		"faster: langgraph-js-memory (in process, no network round trip", // Put is below the line
		"faster: langgraph-js-sqlite |", // List.full is not
		"Could not run: langgraph-js-redis: ERR unknown command 'JSON.SET'",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if strings.HasPrefix(line, "|") && strings.Count(line, " | ") < 2 && !strings.HasPrefix(line, "|---") {
			t.Errorf("table line with too few cells: %q", line)
		}
	}
}

// TestPerfDocIsGenerated: the block of docs/performance.md is what the
// harness generates from the committed results, so nobody edits the figures
// by hand (and a run that changed latest.json rewrote the document too).
func TestPerfDocIsGenerated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("results", "latest.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, rows, err := decodeResults(b)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", perfDocPath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceBlock(string(doc), perfBlock(h, rows))
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != want {
		t.Errorf("the generated block of %s is not what results/latest.json gives: run go run ./bench -readme from the module root", perfDocPath)
	}
}

// TestSameRuntimeTable: redcheck-js's rows against LangGraph.js's savers,
// with its ratio over each, and the range over the Postgres saver per
// concurrency; nothing when redcheck-js did not run.
func TestSameRuntimeTable(t *testing.T) {
	mk := func(impl, op string, c int, ops, p50 Num) Row {
		r := newRow(impl, op, c)
		r.OpsPerS, r.P50us = ops, p50
		return r
	}
	rows := []Row{
		mk(peerRedcheckJS, "Put", 1, 3000, 300),
		mk(peerMemory, "Put", 1, 6000, 150),
		mk(peerPostgres, "Put", 1, 1000, 900),
		mk(peerRedcheckJS, "GetTuple.latest", 1, 2000, 400),
		mk(peerPostgres, "GetTuple.latest", 1, 100, 9000),
		mk(peerRedcheckJS, "Put", 64, 5000, 9000),
		mk(peerPostgres, "Put", 64, 2500, 20000),
		mk(peerRedcheckJS, "List.full", 1, 60, 15000), // no saver ran it
	}
	var b strings.Builder
	writeSameRuntime(&b, rows)
	got := b.String()
	for _, want := range []string{
		"| operation | c | redcheck-js | langgraph-js-memory | langgraph-js-sqlite | langgraph-js-postgres |",
		"| Put | 1 | 300 µs · 3,000/s | 6,000/s (0.50×) | — | 1,000/s (3.00×) |",
		"| GetTuple.latest | 1 | 400 µs · 2,000/s | — | — | 100/s (20.00×) |",
		"| List.full | 1 | 15,000 µs · 60/s | — | — | — |",
		"3.00× to 20.00× at concurrency 1, 2.00× to 2.00× at concurrency 64.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	writeSameRuntime(&b, rows[1:3])
	if b.Len() != 0 {
		t.Errorf("written without redcheck-js rows:\n%s", b.String())
	}
}
