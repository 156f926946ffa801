package main

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 50, 7 * time.Millisecond},
		{"one p99", ms(7), 99, 7 * time.Millisecond},
		{"median of 4 is the 2nd (nearest rank)", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"median of 5", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"p99 of 100 is the 99th", ms(seq(100)...), 99, 99 * time.Millisecond},
		{"p99 of 1000 is the 990th", ms(seq(1000)...), 99, 990 * time.Millisecond},
		{"p100 is the max", ms(1, 2, 3), 100, 3 * time.Millisecond},
		{"tiny p is the min", ms(1, 2, 3), 0.001, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", tt.name, tt.p, got, tt.want)
		}
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestLatencyStatsSortsAndConverts(t *testing.T) {
	lat := []time.Duration{300 * time.Microsecond, 100 * time.Microsecond, 200 * time.Microsecond}
	p50, p99 := latencyStats(lat)
	if p50 != 200 || p99 != 300 {
		t.Errorf("p50, p99 = %v, %v; want 200, 300 µs", p50, p99)
	}
	if p50, p99 := latencyStats(nil); p50.Valid() || p99.Valid() {
		t.Errorf("no latencies gave %v, %v; want NA", p50, p99)
	}
}

func TestNumJSON(t *testing.T) {
	for _, tt := range []struct {
		n    Num
		want string
	}{
		{1, "1"}, {1.23456, "1.235"}, {0, "0"}, {12345.6, "12345.6"}, {NA, "null"}, {Num(math.Inf(1)), "null"},
	} {
		b, err := json.Marshal(tt.n)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", float64(tt.n), b, err, tt.want)
		}
	}
	var n Num
	if err := json.Unmarshal([]byte("null"), &n); err != nil || n.Valid() {
		t.Errorf("null decoded to %v, %v", n, err)
	}
	if err := json.Unmarshal([]byte("2.5"), &n); err != nil || n != 2.5 {
		t.Errorf("2.5 decoded to %v, %v", n, err)
	}
}

// TestRowJSONKeys pins the row format: the keys of issue 6, then those of
// issue 14, in this order, nothing else.
func TestRowJSONKeys(t *testing.T) {
	r := newRow("redcheck", "Put", 1)
	r.N, r.OpsPerS, r.P50us, r.Sent, r.Recv = 10, 1000, 50, 100, 5
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"impl":"redcheck","op":"Put","concurrency":1,"n":10,"ops_per_s":1000,"p50_us":50,"p99_us":null,` +
		`"roundtrips_per_op":null,"bytes_per_op":null,"allocs_per_op":null,"ratio_to_limit":null,` +
		`"sent_per_op":100,"received_per_op":5,"server_us_per_op":null,"server_cpu_us_per_op":null,"floor_p50_us":null,"ratio_to_floor":null}`
	if string(b) != want {
		t.Errorf("row JSON\n got %s\nwant %s", b, want)
	}
}

func TestFillRatios(t *testing.T) {
	mk := func(impl, op string, c int, ops, p50 Num) Row {
		r := newRow(impl, op, c)
		r.OpsPerS, r.P50us = ops, p50
		return r
	}
	rows := []Row{
		mk(implLimit, opEvalSha, 1, 40000, 25),
		mk(implLimit, opHGetAll, 1, 45000, 20),
		mk(implOurs, "Put", 1, 5000, 100),
		mk(implFloor, floorSet+"Put", 1, 20000, 50), // the dearer at 1
		mk(implFloor, floorGet+"Put", 1, 30000, 30),
		mk(implLimit, opEvalSha, 64, 80000, 800),
		mk(implOurs, "Put", 64, 20000, 3000),
		mk(implFloor, floorSet+"Put", 64, 60000, 1000),
		mk(implFloor, floorGet+"Put", 64, 50000, 1000), // the lower throughput at 64
		mk("peer", "Put", 16, 100, 1000),               // no limit at 16
		mk(implOurs, "GetTuple.latest", 1, 0, NA),
		mk(implOurs, "List.page10", 1, 100, 80), // no floor rows
	}
	fillRatios(rows)
	type want struct{ limit, floorP50, floor Num }
	wants := []want{{1, NA, NA}, {0.8, NA, NA}, {4, 50, 2}, {2, NA, NA}, {1.2, NA, NA},
		{1, NA, NA}, {4, 1000, 2.5}, {1.333333333, NA, NA}, {1.6, NA, NA}, {NA, NA, NA}, {NA, NA, NA}, {3.2, NA, NA}}
	eq := func(a, b Num) bool {
		return a.Valid() == b.Valid() && (!b.Valid() || math.Abs(float64(a-b)) < 1e-6)
	}
	for i, r := range rows {
		w := wants[i]
		if !eq(r.RatioToLimit, w.limit) || !eq(r.FloorP50us, w.floorP50) || !eq(r.RatioToFloor, w.floor) {
			t.Errorf("%s %s c=%d: ×limit %v, floor p50 %v, ×floor %v; want %v, %v, %v", r.Impl, r.Op, r.Concurrency,
				r.RatioToLimit, r.FloorP50us, r.RatioToFloor, w.limit, w.floorP50, w.floor)
		}
	}
}
