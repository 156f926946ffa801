package eino_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/graphstate/redcheck/adapters/eino"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// orderState is the graph's local state, which eino keeps in its
// checkpoints (registered for eino's serializer).
type orderState struct {
	Log       []string
	Drafts    int
	Approvals []string
}

func init() { schema.RegisterName[*orderState]("redcheck_eino_test_order_state") }

// orderGraph is one compiled instance of the test graph, as one process
// builds it: START -> draft -> approve -> confirm -> publish -> END, where
// approve and confirm each interrupt for a human once and resume with the
// human's answer. calls counts the node runs of this instance.
type orderGraph struct {
	run   compose.Runnable[string, string]
	calls map[string]*atomic.Int32
}

func newOrderGraph(t testing.TB, store compose.CheckPointStore) *orderGraph {
	t.Helper()
	ctx := context.Background()
	og := &orderGraph{calls: map[string]*atomic.Int32{}}
	for _, n := range []string{"draft", "approve", "confirm", "publish"} {
		og.calls[n] = new(atomic.Int32)
	}
	g := compose.NewGraph[string, string](compose.WithGenLocalState(func(context.Context) *orderState { return &orderState{} }))
	add := func(name string, f func(ctx context.Context, in string) (string, error)) {
		t.Helper()
		if err := g.AddLambdaNode(name, compose.InvokableLambda(func(ctx context.Context, in string) (string, error) {
			og.calls[name].Add(1)
			return f(ctx, in)
		})); err != nil {
			t.Fatal(err)
		}
	}
	add("draft", func(ctx context.Context, in string) (string, error) {
		err := compose.ProcessState(ctx, func(_ context.Context, s *orderState) error {
			s.Drafts++
			s.Log = append(s.Log, "draft:"+in)
			return nil
		})
		return "refund for " + in, err
	})
	human := func(step string) func(ctx context.Context, in string) (string, error) {
		return func(ctx context.Context, in string) (string, error) {
			wasInterrupted, _, asked := compose.GetInterruptState[string](ctx)
			if !wasInterrupted {
				return "", compose.StatefulInterrupt(ctx, step+" "+in+"?", in)
			}
			isTarget, hasData, answer := compose.GetResumeContext[string](ctx)
			if !isTarget || !hasData {
				return "", compose.StatefulInterrupt(ctx, step+" "+asked+"?", asked)
			}
			err := compose.ProcessState(ctx, func(_ context.Context, s *orderState) error {
				s.Approvals = append(s.Approvals, step+":"+answer)
				s.Log = append(s.Log, step+":"+asked)
				return nil
			})
			return asked, err
		}
	}
	add("approve", human("approve"))
	add("confirm", human("confirm"))
	add("publish", func(ctx context.Context, in string) (string, error) {
		var out string
		err := compose.ProcessState(ctx, func(_ context.Context, s *orderState) error {
			out = fmt.Sprintf("%s | log=%s | approvals=%s | drafts=%d", in, strings.Join(s.Log, ","), strings.Join(s.Approvals, ","), s.Drafts)
			return nil
		})
		return out, err
	})
	for _, e := range [][2]string{{compose.START, "draft"}, {"draft", "approve"}, {"approve", "confirm"}, {"confirm", "publish"}, {"publish", compose.END}} {
		if err := g.AddEdge(e[0], e[1]); err != nil {
			t.Fatal(err)
		}
	}
	run, err := g.Compile(ctx, compose.WithCheckPointStore(store), compose.WithGraphName("orders"))
	if err != nil {
		t.Fatal(err)
	}
	og.run = run
	return og
}

// interruptID returns the ID of the root-cause interrupt of err, failing
// the test when err is not an interrupt.
func interruptID(t testing.TB, err error) string {
	t.Helper()
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		t.Fatalf("want an interrupt, got %v", err)
	}
	for _, c := range info.InterruptContexts {
		if c.IsRootCause {
			return c.ID
		}
	}
	t.Fatalf("interrupt without a root cause: %+v", info)
	return ""
}

// process is what one process of the application opens: a client, a
// saver, a store and a graph of its own.
func process(t testing.TB, tr tier, sopts redissaver.Options, opts eino.Options) (*eino.Store, *orderGraph) {
	t.Helper()
	st := newStore(t, tr, sopts, opts)
	return st, newOrderGraph(t, st)
}

// TestComposeInterruptRestartResume: an eino compose graph interrupts for a
// human; a new process (new client, saver, store and graph instance)
// resumes it from Redis with the human's answer, and it interrupts again;
// a third process resumes it to completion. The graph's state (its log,
// counters and approvals) comes through whole, the node before the first
// interrupt runs once in all, the ID's history holds both interrupts, and
// Delete leaves no key.
func TestComposeInterruptRestartResume(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		p := prefix(t)
		sopts := redissaver.Options{Prefix: p}
		const id = "order-1001"

		st1, g1 := process(t, tr, sopts, eino.Options{})
		_, err := g1.run.Invoke(ctx, "order 1001", compose.WithCheckPointID(id))
		first := interruptID(t, err)
		if _, ok, err := st1.Get(ctx, id); !ok || err != nil {
			t.Fatalf("no checkpoint after the interrupt: %v %v", ok, err)
		}

		st2, g2 := process(t, tr, sopts, eino.Options{})
		_, err = g2.run.Invoke(compose.ResumeWithData(ctx, first, "alice"), "", compose.WithCheckPointID(id))
		second := interruptID(t, err)
		if second == first {
			t.Fatalf("the second interrupt has the first's id %q", first)
		}
		if h := history(t, st2, id); len(h) != 2 || h[0].Step != 1 || h[0].ParentID != h[1].CheckpointID {
			t.Fatalf("history after two interrupts: %+v", h)
		}

		st3, g3 := process(t, tr, sopts, eino.Options{})
		out, err := g3.run.Invoke(compose.ResumeWithData(ctx, second, "bob"), "", compose.WithCheckPointID(id))
		if err != nil {
			t.Fatalf("resume to completion: %v", err)
		}
		want := "refund for order 1001 | log=draft:order 1001,approve:refund for order 1001,confirm:refund for order 1001 | approvals=approve:alice,confirm:bob | drafts=1"
		if out != want {
			t.Errorf("output:\n got %q\nwant %q", out, want)
		}
		runs := fmt.Sprint(g1.calls["draft"].Load(), g2.calls["draft"].Load(), g3.calls["draft"].Load(),
			g2.calls["approve"].Load(), g3.calls["confirm"].Load(), g3.calls["publish"].Load())
		if runs != "1 0 0 1 1 1" {
			t.Errorf("node runs (draft per process, approve in 2, confirm and publish in 3) = %s, want 1 0 0 1 1 1", runs)
		}

		// The run is done: eino leaves its last checkpoint; Delete takes the
		// whole history.
		if err := st3.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		if data, ok, err := st1.Get(ctx, id); ok || err != nil || data != nil {
			t.Errorf("Get after Delete: %q %v %v", data, ok, err)
		}
		if left := tr.dataKeys(t, p); len(left) != 0 {
			t.Errorf("keys left after Delete: %v", left)
		}
	})
}

// TestComposeConcurrentRuns: 8 runs with distinct checkpoint IDs share one
// store and one compiled graph, interrupt concurrently, then are resumed
// concurrently by another process: each ends with its own input and its
// own answers, none with another's.
func TestComposeConcurrentRuns(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		sopts := redissaver.Options{Prefix: prefix(t)}
		const runs = 8
		parallel := func(f func(i int) error) {
			t.Helper()
			var wg sync.WaitGroup
			errs := make([]error, runs)
			for i := range runs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = f(i)
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
		}
		ids := make([]string, runs)
		// interrupts[i] is the pending interrupt of run i.
		interrupts := make([]string, runs)
		pending := func(i int, err error) error {
			info, ok := compose.ExtractInterruptInfo(err)
			if !ok || len(info.InterruptContexts) != 1 {
				return fmt.Errorf("run %d: want one interrupt, got %v", i, err)
			}
			interrupts[i] = info.InterruptContexts[0].ID
			return nil
		}
		_, g := process(t, tr, sopts, eino.Options{})
		parallel(func(i int) error {
			ids[i] = fmt.Sprint("run-", i)
			_, err := g.run.Invoke(ctx, fmt.Sprint("order ", i), compose.WithCheckPointID(ids[i]))
			return pending(i, err)
		})
		_, g = process(t, tr, sopts, eino.Options{})
		parallel(func(i int) error {
			_, err := g.run.Invoke(compose.ResumeWithData(ctx, interrupts[i], fmt.Sprint("alice-", i)), "", compose.WithCheckPointID(ids[i]))
			return pending(i, err)
		})
		_, g = process(t, tr, sopts, eino.Options{})
		parallel(func(i int) error {
			out, err := g.run.Invoke(compose.ResumeWithData(ctx, interrupts[i], fmt.Sprint("bob-", i)), "", compose.WithCheckPointID(ids[i]))
			if err != nil {
				return fmt.Errorf("run %d: %w", i, err)
			}
			want := fmt.Sprintf("refund for order %d | log=draft:order %d,approve:refund for order %d,confirm:refund for order %d | approvals=approve:alice-%d,confirm:bob-%d | drafts=1", i, i, i, i, i, i)
			if out != want {
				return fmt.Errorf("run %d:\n got %q\nwant %q", i, out, want)
			}
			return nil
		})
		if n := g.calls["draft"].Load(); n != 0 {
			t.Errorf("the resuming process ran draft %d times", n)
		}
	})
}

// TestComposeLostKey: when Redis loses a key of an interrupted run's
// checkpoint (eviction, a manual DEL), resuming it fails with
// checkpoint.ErrDataLoss: never a fresh start of the graph (its first node
// does not run) and never an older checkpoint. A Set refuses to write over
// the loss; Delete clears the ID, which then starts anew.
func TestComposeLostKey(t *testing.T) {
	kinds := []struct {
		name  string
		match func(key, id string) bool
	}{
		{"thread head", func(k, id string) bool { return strings.HasSuffix(k, ":t:"+id) }},
		{"checkpoint hash", func(k, _ string) bool { return strings.Contains(k, ":cp:") }},
		{"values hash", func(k, _ string) bool { return strings.HasSuffix(k, ":blobs") }},
		{"namespace index", func(k, _ string) bool { return strings.HasSuffix(k, ":n::idx") }},
	}
	tiers(t, func(t *testing.T, tr tier) {
		for _, kind := range kinds {
			t.Run(strings.ReplaceAll(kind.name, " ", "-"), func(t *testing.T) {
				ctx := context.Background()
				p := prefix(t)
				sopts := redissaver.Options{Prefix: p}
				const id = "lost-1"
				_, g := process(t, tr, sopts, eino.Options{})
				_, err := g.run.Invoke(ctx, "order 7", compose.WithCheckPointID(id))
				first := interruptID(t, err)
				// A second interrupt, so that an older checkpoint exists to
				// be wrongly answered.
				_, err = g.run.Invoke(compose.ResumeWithData(ctx, first, "alice"), "", compose.WithCheckPointID(id))
				second := interruptID(t, err)

				var lost []string
				for _, k := range tr.keysUnder(t, p) {
					if kind.match(k, id) {
						lost = append(lost, k)
					}
				}
				if len(lost) == 0 {
					t.Fatalf("no %s key among %v", kind.name, tr.keysUnder(t, p))
				}
				if kind.name == "checkpoint hash" {
					// The latest checkpoint's hash: the greatest ID.
					latest := lost[0]
					for _, k := range lost {
						latest = max(latest, k)
					}
					lost = []string{latest}
				}
				if err := tr.client(t).Del(ctx, lost...).Err(); err != nil {
					t.Fatal(err)
				}

				st, g := process(t, tr, sopts, eino.Options{})
				out, err := g.run.Invoke(compose.ResumeWithData(ctx, second, "bob"), "order 7", compose.WithCheckPointID(id))
				if !errors.Is(err, checkpoint.ErrDataLoss) {
					t.Errorf("resume after the loss of %v: %q, %v; want ErrDataLoss", lost, out, err)
				}
				if n := g.calls["draft"].Load() + g.calls["approve"].Load() + g.calls["confirm"].Load(); n != 0 {
					t.Errorf("the graph ran %d nodes after the loss", n)
				}
				if data, ok, err := st.Get(ctx, id); !errors.Is(err, checkpoint.ErrDataLoss) || ok || data != nil {
					t.Errorf("Get after the loss: %q %v %v", data, ok, err)
				}
				if err := st.Set(ctx, id, []byte("over the loss")); !errors.Is(err, checkpoint.ErrDataLoss) {
					t.Errorf("Set after the loss: %v", err)
				}
				// Delete clears the ID. With its head lost it also reports the
				// loss (the keys of the lost head's generation cannot be
				// found from it), and the ID is cleared all the same.
				if err := st.Delete(ctx, id); err != nil && (kind.name != "thread head" || !errors.Is(err, checkpoint.ErrDataLoss)) {
					t.Fatalf("Delete after the loss: %v", err)
				}
				if data, ok, err := st.Get(ctx, id); ok || err != nil || data != nil {
					t.Errorf("Get after Delete: %q %v %v", data, ok, err)
				}
				if _, err := g.run.Invoke(ctx, "order 8", compose.WithCheckPointID(id)); interruptID(t, err) == "" || g.calls["draft"].Load() != 1 {
					t.Errorf("a new run after Delete: %v", err)
				}
			})
		}
	})
}

// TestComposeLease: the saver's TTL is a lease on each checkpoint ID that
// every Set renews; once it runs out the ID reads as never written (eino
// starts the run anew: expiry is not loss) and, swept, leaves no key.
func TestComposeLease(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		p := prefix(t)
		sopts := redissaver.Options{Prefix: p, TTL: tr.ttl}
		const id = "leased"
		st, g := process(t, tr, sopts, eino.Options{})
		_, err := g.run.Invoke(ctx, "order 9", compose.WithCheckPointID(id))
		first := interruptID(t, err)
		tr.advance(tr.ttl * 6 / 10)
		_, err = g.run.Invoke(compose.ResumeWithData(ctx, first, "alice"), "", compose.WithCheckPointID(id))
		interruptID(t, err)
		// 1.2 TTLs after the first Set, 0.6 after the second: alive.
		tr.advance(tr.ttl * 6 / 10)
		if _, ok, err := st.Get(ctx, id); !ok || err != nil {
			t.Fatalf("Get within the renewed lease: %v %v", ok, err)
		}
		tr.advance(tr.ttl * 6 / 10)
		if data, ok, err := st.Get(ctx, id); ok || err != nil || data != nil {
			t.Fatalf("Get after the lease: %q %v %v", data, ok, err)
		}
		if _, err := st.Saver().Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if left := tr.dataKeys(t, p); len(left) != 0 {
			t.Errorf("keys left after the lease and Sweep: %v", left)
		}
		// eino starts over on an expired ID.
		_, err = g.run.Invoke(ctx, "order 10", compose.WithCheckPointID(id))
		interruptID(t, err)
		if n := g.calls["draft"].Load(); n != 2 {
			t.Errorf("draft ran %d times, want 2 (the first run and the new one)", n)
		}
	})
}
