package main

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// readPass measures one read of the fixture at a concurrency. Operation i
// reads thread i mod T; by-id and page reads pick their checkpoint by a
// fixed stride through the thread, so every run reads the same ones.
// GetTuple.byid reads through a second saver on the same prefix;
// GetTuple.byid.repeat makes the same reads through the writing saver.
func (h *harness) readPass(op string, conc, maxOps int) *pass {
	f := h.fixture
	s := f.saver
	nT, nS := len(f.threads), h.cfg.steps
	root := ""
	var do func(ctx context.Context, w, i int) error
	switch op {
	case "GetTuple.latest":
		do = func(ctx context.Context, _, i int) error {
			t := i % nT
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: f.threads[t]})
			if err == nil && tup.Checkpoint.ID != f.ids[t][nS-1] {
				err = fmt.Errorf("latest of %s is %s, want %s", f.threads[t], tup.Checkpoint.ID, f.ids[t][nS-1])
			}
			return err
		}
	case "GetTuple.byid", "GetTuple.byid.repeat":
		reader := f.cold
		if op == "GetTuple.byid.repeat" {
			reader = s
		}
		do = func(ctx context.Context, _, i int) error {
			t := i % nT
			id := f.ids[t][(i*7919)%nS]
			tup, err := reader.GetTuple(ctx, checkpoint.Config{ThreadID: f.threads[t], CheckpointID: id})
			if err == nil && len(tup.PendingWrites) != 6 {
				err = fmt.Errorf("checkpoint %s has %d pending writes, want 6", id, len(tup.PendingWrites))
			}
			return err
		}
	case "List.full":
		do = func(ctx context.Context, _, i int) error {
			n := 0
			for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: f.threads[i%nT], CheckpointNS: &root}) {
				if err != nil {
					return err
				}
				n++
			}
			if n != nS {
				return fmt.Errorf("listed %d checkpoints, want %d", n, nS)
			}
			return nil
		}
	case "List.page10":
		do = func(ctx context.Context, _, i int) error {
			t := i % nT
			before := f.ids[t][10+(i*31)%(nS-10)]
			n := 0
			for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: f.threads[t], CheckpointNS: &root, Before: before, Limit: 10}) {
				if err != nil {
					return err
				}
				n++
			}
			if n != 10 {
				return fmt.Errorf("page of %d checkpoints, want 10", n)
			}
			return nil
		}
	default:
		return &pass{impl: implOurs, op: op, conc: conc, err: fmt.Errorf("unknown read %q", op)}
	}
	return &pass{impl: implOurs, op: op, conc: conc, maxOps: maxOps, warmup: max(conc, 20),
		budget: h.cfg.budget, meter: h.meter, do: do}
}

// deltaPasses builds a chain of n checkpoints (a DeltaSnapshot of "log" at
// the first, one write to "log" at each) and measures DeltaChannelHistory
// from its head against the walk a saver without it makes a caller do: a
// GetTuple per ancestor.
func (h *harness) deltaPasses(ctx context.Context, n int) error {
	s, err := h.newSaver(ctx, h.client, "delta", redissaver.Options{})
	if err != nil {
		return err
	}
	head, err := deltaChain(ctx, s, n)
	if err != nil {
		return err
	}
	op := fmt.Sprintf("DeltaChannelHistory/steps=%d", n)
	delta := &pass{impl: implOurs, op: op, conc: 1, maxOps: min(h.cfg.ops, 300), warmup: 2,
		budget: h.cfg.budget, meter: h.meter,
		do: func(ctx context.Context, _, _ int) error {
			hist, err := s.DeltaChannelHistory(ctx, head, []string{"log"})
			if err == nil && len(hist["log"].Writes) != n-1 {
				err = fmt.Errorf("%d writes, want %d", len(hist["log"].Writes), n-1)
			}
			return err
		}}
	walks := 6
	if h.cfg.quick {
		walks = 2
	}
	walk := &pass{impl: implOurs, op: fmt.Sprintf("DeltaChannelHistory.walk/steps=%d", n), conc: 1, maxOps: walks, warmup: 0,
		budget: h.cfg.budget, meter: h.meter,
		do: func(ctx context.Context, _, _ int) error {
			got, err := walkHistory(ctx, s, head, "log")
			if err == nil && got != n-1 {
				err = fmt.Errorf("walk found %d writes, want %d", got, n-1)
			}
			return err
		}}
	h.runGroup(ctx, h.cfg.rounds, delta, walk)
	return nil
}

// deltaChain writes the chain DeltaChannelHistory walks in the benchmark: n
// checkpoints of thread "delta", a DeltaSnapshot of "log" at the first and
// one write to "log" at each. It returns the config of the last.
func deltaChain(ctx context.Context, s *redissaver.Saver, n int) (checkpoint.Config, error) {
	head := checkpoint.Config{ThreadID: "delta"}
	for step := range n {
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
		var nv map[string]string
		if step == 0 {
			cp.ChannelValues["log"] = checkpoint.DeltaSnapshot{Value: []any{}}
			cp.ChannelVersions["log"] = version(1)
			nv = map[string]string{"log": version(1)}
		}
		var err error
		if head, err = s.Put(ctx, head, cp, checkpoint.Metadata{"step": step}, nv); err != nil {
			return head, err
		}
		if err := s.PutWrites(ctx, head, []checkpoint.Write{{Channel: "log", Value: message(step)}}, "task", ""); err != nil {
			return head, err
		}
	}
	return head, nil
}

// walkHistory reads each ancestor of head with GetTuple until one holds a
// value of ch, and returns the number of writes to ch it collected.
func walkHistory(ctx context.Context, s *redissaver.Saver, head checkpoint.Config, ch string) (int, error) {
	tup, err := s.GetTuple(ctx, head)
	if err != nil {
		return 0, err
	}
	n := 0
	for cur := tup.ParentConfig; cur != nil; {
		t, err := s.GetTuple(ctx, *cur)
		if err != nil {
			return 0, err
		}
		for _, w := range t.PendingWrites {
			if w.Channel == ch {
				n++
			}
		}
		if _, ok := t.Checkpoint.ChannelValues[ch]; ok {
			break
		}
		cur = t.ParentConfig
	}
	return n, nil
}

// limitPasses returns the limit's passes at a concurrency: EVALSHA of a
// script that returns 1, and HGETALL of a hash of 4 small fields, on the
// same server through a client instrumented like the saver's.
func (h *harness) limitPasses(ctx context.Context, conc int) []*pass {
	key := h.prefix("limit")
	sha, err := h.lclient.ScriptLoad(ctx, "return 1").Result()
	if err == nil {
		err = h.lclient.HSet(ctx, key+":h", "a", "1", "b", "two", "c", "three!", "d", "4444").Err()
	}
	eval := &pass{impl: implLimit, op: opEvalSha, conc: conc, maxOps: h.cfg.ops, warmup: max(conc, 20),
		budget: h.cfg.budget, meter: h.lmeter, err: err,
		do: func(ctx context.Context, _, _ int) error {
			return h.lclient.EvalSha(ctx, sha, []string{key}).Err()
		}}
	hgetall := &pass{impl: implLimit, op: opHGetAll, conc: conc, maxOps: h.cfg.ops, warmup: max(conc, 20),
		budget: h.cfg.budget, meter: h.lmeter, err: err,
		do: func(ctx context.Context, _, _ int) error {
			return h.lclient.HGetAll(ctx, key+":h").Err()
		}}
	return []*pass{eval, hgetall}
}
