package main

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
)

// count returns the number of checkpoints of a thread and the latest one.
func count(t *testing.T, f *fixture, thread string) (int, *checkpoint.Tuple) {
	t.Helper()
	n, latest := 0, (*checkpoint.Tuple)(nil)
	for tu, err := range f.saver.List(context.Background(), checkpoint.ListQuery{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			latest = tu
		}
		n++
	}
	return n, latest
}

func TestDemoAgentRunsBoundedAndRestarts(t *testing.T) {
	f := newFixture(t)
	a := newDemoAgent(f.saver, 3, 1)
	ctx := context.Background()
	turns := func(n int) {
		for range n {
			if err := a.turn(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Per thread: the input, then writes and a checkpoint per step: 7
	// turns to reach step 2, the last of 3.
	turns(7 * len(a.threads))
	for _, id := range a.threadIDs() {
		n, latest := count(t, f, id)
		msgs, _ := latest.Checkpoint.ChannelValues["messages"].([]any)
		if n != 4 || latest.Metadata["step"] != int64(2) || len(latest.PendingWrites) != 0 || len(msgs) < 4 {
			t.Fatalf("%s after its run: %d checkpoints, latest %+v", id, n, latest)
		}
	}
	turns(len(a.threads)) // rest
	if n, _ := count(t, f, a.threads[0].id); n != 4 {
		t.Fatalf("resting thread has %d checkpoints", n)
	}
	turns(len(a.threads)) // delete
	for _, id := range a.threadIDs() {
		if n, _ := count(t, f, id); n != 0 {
			t.Fatalf("%s not deleted after its rest: %d checkpoints", id, n)
		}
	}
	turns(len(a.threads) + 1) // start over, then the first tasks' writes
	n, latest := count(t, f, a.threads[0].id)
	if n != 1 || latest.Metadata["source"] != "input" || len(latest.PendingWrites) == 0 {
		t.Fatalf("restarted thread: %d checkpoints, latest %+v", n, latest)
	}

	// run stops with its context.
	rctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { a.run(rctx, time.Millisecond); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop with its context")
	}
}

func TestJSONValue(t *testing.T) {
	deep := any("leaf")
	for range 100 {
		deep = []any{deep}
	}
	in := map[string]any{
		"nan":   math.NaN(),
		"inf":   float32(math.Inf(1)),
		"bytes": []byte("hi"),
		"time":  time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), // MarshalJSON fails past 9999
		"list":  []any{int64(1), uint64(math.MaxUint64), "s", nil, true},
		"delta": checkpoint.DeltaSnapshot{Value: []any{math.Inf(-1)}},
		"ptr":   &checkpoint.DeltaSnapshot{Value: "x"},
		"chan":  make(chan int),
		"deep":  deep,
	}
	data, err := json.Marshal(jsonValue(in))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["nan"] != "NaN" || got["inf"] != "+Inf" || got["bytes"].(map[string]any)["$bytes"] != "aGk=" ||
		got["time"] != "12000-01-01T00:00:00Z" || got["ptr"].(map[string]any)["$delta"] != "x" {
		t.Errorf("converted: %s", data)
	}
	if d := got["delta"].(map[string]any)["$delta"].([]any); d[0] != "-Inf" {
		t.Errorf("delta: %v", d)
	}
	if !strings.Contains(string(data), "nested too deep") || !strings.HasPrefix(got["chan"].(string), "0x") {
		t.Errorf("deep or chan: %s", data)
	}
}
