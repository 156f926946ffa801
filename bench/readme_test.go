package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceBlock(t *testing.T) {
	doc := "# x\n\nintro\n" + readmeBegin + "\nold table\n" + readmeEnd + "\n\n## next\n"
	got, err := replaceBlock(doc, "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# x\n\nintro\n" + readmeBegin + "\nnew table\n" + readmeEnd + "\n\n## next\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	again, _ := replaceBlock(got, "new table\n")
	if again != got {
		t.Error("rewriting with the same block changed the document")
	}
	for _, bad := range []string{"no markers", readmeEnd + "\n" + readmeBegin} {
		if _, err := replaceBlock(bad, "x"); err == nil {
			t.Errorf("replaceBlock(%q) did not fail", bad)
		}
	}
}

func TestReadmeBlock(t *testing.T) {
	rows := targetRows()
	rows = append(rows, newRow(implLimit, opEvalSha, 64))
	fillRatios(rows)
	h := header{Machine: machine{CPU: "cpu", Cores: 2, Go: "go1.26", LoadAvgStart: "1.50 2.00 2.50", LoadAvgEnd: "1.00 1.00 1.00"},
		Command: "go run ./bench", Date: "2026-11-24T00:00:00Z", Redis: redisInfo{Version: "7.0.15"},
		Peers: peerInfo{Skipped: []peerSkip{{"langgraph-js-redis", "ERR unknown command 'JSON.SET'"}}}}
	h.Targets = evaluateTargets(rows, memoryResult{}, memoryResult{}, nil)
	block := readmeBlock(h, rows)
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

// TestReadmeIsGenerated: the README's block is what the harness generates
// from the committed results, so nobody edits the figures by hand (and a
// run that changed latest.json rewrote the README too).
func TestReadmeIsGenerated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("results", "latest.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, rows, err := decodeResults(b)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", readmePath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceBlock(string(doc), readmeBlock(h, rows))
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != want {
		t.Errorf("the generated block of %s is not what results/latest.json gives: run go run ./bench -readme from the module root", readmePath)
	}
}
