package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestMeasureBoundedByOps(t *testing.T) {
	var calls atomic.Int64
	row, err := measure(context.Background(), pass{impl: "x", op: "noop", conc: 4, maxOps: 100, warmup: 8, budget: time.Minute,
		do: func(context.Context, int, int) error { calls.Add(1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if row.N != 100 || calls.Load() != 108 {
		t.Errorf("n = %d, calls = %d; want 100 measured after 8 warmup", row.N, calls.Load())
	}
	if !row.OpsPerS.Valid() || !row.P50us.Valid() || row.RoundTrips.Valid() {
		t.Errorf("row %+v (no meter: no round trips)", row)
	}
}

func TestMeasureBoundedByTime(t *testing.T) {
	start := time.Now()
	row, err := measure(context.Background(), pass{impl: "x", op: "slow", conc: 2, maxOps: 1_000_000, budget: 300 * time.Millisecond,
		do: func(context.Context, int, int) error { time.Sleep(5 * time.Millisecond); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	// At most 2 callers × 300 ms / 5 ms; a loaded machine sleeps longer, so
	// only the bounds are checked.
	if d := time.Since(start); d > 3*time.Second || row.N == 0 || row.N > 120 {
		t.Errorf("%d operations in %v", row.N, d)
	}
}

func TestMeasureStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	_, err := measure(context.Background(), pass{impl: "x", op: "fail", conc: 3, maxOps: 1000, budget: time.Minute,
		do: func(_ context.Context, _, i int) error {
			if i == 10 {
				return boom
			}
			return nil
		}})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

// TestInterleave: chunks add up to maxOps, operation numbers keep counting
// across chunks, and the order rotates.
func TestInterleave(t *testing.T) {
	var order []string
	seen := map[int]bool{}
	mk := func(name string) *pass {
		last := ""
		return &pass{impl: "x", op: name, conc: 1, maxOps: 10, warmup: 2, budget: time.Minute,
			do: func(_ context.Context, _, i int) error {
				if name == "a" {
					seen[i] = true
				}
				if last != "" || len(order) == 0 || order[len(order)-1] != name {
					order = append(order, name)
				}
				last = name
				return nil
			}}
	}
	a, b := mk("a"), mk("b")
	interleave(context.Background(), 3, a, b)
	ra, _ := a.row()
	rb, _ := b.row()
	if ra.N != 10 || rb.N != 10 {
		t.Errorf("n = %d, %d; want 10 each", ra.N, rb.N)
	}
	if len(seen) != 12 {
		t.Errorf("pass a ran %d distinct operation numbers, want 12 (2 warmup + 10)", len(seen))
	}
	if len(order) < 4 {
		t.Errorf("passes did not interleave: %v", order)
	}
}

func TestMeterCounts(t *testing.T) {
	m := &meter{}
	m.sent.Add(10)
	m.trips.Add(2)
	u0 := m.load()
	m.sent.Add(5)
	m.recv.Add(7)
	m.trips.Add(1)
	if d := m.load().minus(u0); d != (usage{5, 7, 1}) {
		t.Errorf("delta %+v", d)
	}
	var none *meter
	if none.load() != (usage{}) {
		t.Error("nil meter should read zero")
	}
}
