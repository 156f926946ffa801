package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCallgrindTotal(t *testing.T) {
	for _, c := range []struct {
		name, dump string
		want       int64
		ok         bool
	}{
		{"totals after summary", "version: 1\nevents: Ir\nsummary: 0\nfn=(1)\n0 5\ntotals: 123939705\n", 123939705, true},
		{"several events", "events: Ir Dr\ntotals: 42 7\n", 42, true},
		{"no totals yet", "version: 1\nevents: Ir\nsummary: 17\n", 0, false},
		{"empty totals", "totals:\n", 0, false},
		{"not a number", "totals: many\n", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := callgrindTotal(strings.NewReader(c.dump))
			if (err == nil) != c.ok || got != c.want {
				t.Errorf("callgrindTotal = %d, %v; want %d (ok %v)", got, err, c.want, c.ok)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{9, 1, 5}, 5}, {[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestPrintInstructions(t *testing.T) {
	var rep, base instrReport
	rep.Rows = []instrRow{{Op: "Put", Instr: 90}, {Op: "New", Instr: 5}}
	base.Rows = []instrRow{{Op: "Put", Instr: 100}, {Op: "Gone", Instr: 1}}
	var b bytes.Buffer
	printInstructions(&b, rep, base)
	out := b.String()
	for _, want := range []string{"-10.0%", "New"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Gone") {
		t.Errorf("output lists an operation the run did not count:\n%s", out)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/valgrind": `'/usr/bin/valgrind'`,
		"/tmp/a b/c":        `'/tmp/a b/c'`,
		"/tmp/it's":         `'/tmp/it'\''s'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
