package main

import (
	"context"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// fixture is a saver on a fresh miniredis.
type fixture struct{ saver *redissaver.Saver }

func newFixture(t *testing.T) *fixture {
	t.Helper()
	_, rdb := redistest.Mini(t)
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: redistest.Prefix(t), Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{saver: saver}
}

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
	turns(len(a.threads)) // rest: a thread with a question waits on an interrupt
	if n, _ := count(t, f, a.threads[0].id); n != 4 {
		t.Fatalf("resting thread has %d checkpoints", n)
	}
	for _, th := range a.threads {
		_, latest := count(t, f, th.id)
		asks := 0
		for _, w := range latest.PendingWrites {
			if v, _ := w.Value.(map[string]any); w.Channel == checkpoint.InterruptChannel && v["value"] == th.ask {
				asks++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[th.ask != ""]; asks != want || len(latest.PendingWrites) != want {
			t.Errorf("%s resting: writes %+v, want %d interrupt", th.id, latest.PendingWrites, want)
		}
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
