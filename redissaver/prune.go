package redissaver

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// pruneBudget is the number of namespaces, ancestors or index entries one
// step of a PruneKeepLatest visits at most.
const pruneBudget = 64

// Prune applies strategy to each thread of threadIDs.
//
// checkpoint.PruneKeepLatest keeps, in each namespace, the newest checkpoint
// with its pending writes and the values its channel versions point to and,
// for each channel it has a version of but no value for (a delta channel),
// the ancestors from its parent up to the nearest one holding a value for
// that channel, so DeltaChannelHistory still finds its seed. Everything else
// goes, values no kept checkpoint points to included. Running it now and
// then keeps a long-lived thread's memory bounded by its latest state.
//
// It works in bounded steps of at most pruneBudget namespaces, ancestors or
// checkpoints each (prune.lua, then blob_gc.lua for the values), one round
// trip per step. Readers meanwhile see each older checkpoint either whole or
// gone, and the newest always whole; checkpoints put during the pruning are
// kept. Cut off, it leaves such a state; call it again to finish. Two
// prunes of one thread at once (two processes) do not undo each other's
// keep sets: in a namespace the one that planned it last prunes it, and the
// other's work there ends without deleting anything; likewise for the
// reclaims of values of prunes and DeleteForRuns.
//
// checkpoint.PruneDelete removes the threads, as DeleteThread does.
//
// An empty list and unknown threads are no-ops. Errors:
// checkpoint.ErrInvalidConfig for an unknown strategy or an empty or
// over-long thread ID; checkpoint.ErrDataLoss for missing data the pruning
// needs.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy checkpoint.PruneStrategy) (err error) {
	ctx, call := s.begin(ctx, opPrune)
	defer func() { call.end(err) }()
	if len(threadIDs) == 1 {
		call.address(threadIDs[0], "", "")
	}
	call.set(attrThreads.Int(len(threadIDs)))
	call.set(attrStrategy.String(string(strategy)))
	if strategy != checkpoint.PruneKeepLatest && strategy != checkpoint.PruneDelete {
		return invalidConfig("unknown prune strategy %q", strategy)
	}
	for _, th := range threadIDs {
		if err := keys.ValidateThreadID(th); err != nil {
			return invalidConfig("%v", err)
		}
	}
	for _, th := range threadIDs {
		var err error
		if strategy == checkpoint.PruneDelete {
			err = s.deleteThread(ctx, th)
		} else {
			err = s.pruneKeepLatest(ctx, th)
		}
		if err != nil {
			return fmt.Errorf("redissaver: prune (%s): %w", strategy, err)
		}
	}
	return nil
}

// pruner runs the steps of prune.lua on one thread.
type pruner struct {
	s    *Saver
	th   string
	call scriptCall // keys and the shard base and thread arguments
	gen  string
	// token marks the keep sets this job plans as its own: another prune of
	// a namespace that starts its plan anew ends this one's work there.
	token string
}

// newPruner returns a pruner of th, with a fresh job token.
func (s *Saver) newPruner(th string) *pruner {
	c := s.threadCall(context.Background(), th) // its event spec goes unused: only keys and the first two arguments
	return &pruner{s: s, th: th, call: scriptCall{keys: []string{c.keys[0], c.keys[1], c.keys[3], c.keys[4]}, args: c.args},
		token: keys.NewGen()}
}

// step runs one step; gone reports a thread deleted, expired or replaced
// since the first step.
func (p *pruner) step(ctx context.Context, phase string, args ...any) (items []any, gone bool, err error) {
	all := append([]any{p.call.args[0], p.call.args[1], p.gen, phase}, args...)
	res, err := p.s.run(ctx, scriptrun.Prune, p.call.keys, all...).Slice()
	if err != nil {
		return nil, false, scriptErr("prune", err)
	}
	if len(res) == 0 {
		return nil, false, corrupt("empty prune reply")
	}
	var d reply
	g := d.str(res[0])
	if d.err != nil {
		return nil, false, d.err
	}
	if g == "" {
		return nil, true, nil
	}
	p.gen = g
	return res[1:], false, nil
}

func (s *Saver) pruneKeepLatest(ctx context.Context, th string) error {
	p := s.newPruner(th)
	var namespaces []string
	for cursor := "0"; ; {
		res, gone, err := p.step(ctx, "namespaces", cursor, "", pruneBudget, "")
		if err != nil || gone {
			return err
		}
		var d reply
		cursor = d.str(res[0])
		for _, ns := range res[1:] {
			namespaces = append(namespaces, d.str(ns))
		}
		if d.err != nil {
			return d.err
		}
		if cursor == "0" {
			break
		}
	}
	deleted := 0
	var refs []nsRef
	shard := s.layout.Shard(th)
	for _, encns := range namespaces {
		// Plan: the keep set.
		var latest string
		var open []any
		for cursor := ""; ; {
			args := append([]any{encns, cursor, pruneBudget, latest, p.token}, open...)
			res, gone, err := p.step(ctx, "plan", args...)
			if err != nil || gone {
				return err
			}
			if len(res) < 2 {
				return corrupt("prune plan reply %v", res)
			}
			var d reply
			cursor, latest, open = d.str(res[0]), d.optStr(res[1]), res[2:]
			if d.err != nil {
				return d.err
			}
			if cursor == "" {
				break
			}
		}
		if latest == "" {
			continue // a namespace emptied meanwhile, or another prune planned it anew
		}
		// Drop what is not kept.
		for cursor := ""; ; {
			res, gone, err := p.step(ctx, "drop", encns, cursor, pruneBudget, latest, p.token)
			if err != nil || gone {
				return err
			}
			if len(res) != 2 {
				return corrupt("prune drop reply %v", res)
			}
			n, _ := res[1].(int64)
			deleted += int(n)
			var d reply
			if cursor = d.str(res[0]); d.err != nil {
				return d.err
			} else if cursor == "" {
				break
			}
		}
		refs = append(refs, nsRef{shard: shard, enct: keys.Encode(th), gen: p.gen, encns: encns})
	}
	if err := s.collectValues(ctx, "prune", refs); err != nil {
		return err
	}
	args := []any{deleted, "", pruneBudget, "", p.token}
	args = append(args, s.eventSpec(ctx, evType, "pruned", evThread, keys.Encode(th), evStrategy, string(checkpoint.PruneKeepLatest))...)
	for _, ns := range namespaces {
		args = append(args, ns)
	}
	_, _, err := p.step(ctx, "finish", args...)
	return err
}

// threadCall builds the keys and arguments shared by delete_thread.lua and
// prune.lua, with the given event fields.
func (s *Saver) threadCall(ctx context.Context, threadID string, event ...string) scriptCall {
	shard := s.layout.Shard(threadID)
	args := []any{s.layout.ShardBase(shard), keys.Encode(threadID), s.opts.Events.RetainDeleted.Milliseconds(), reclaimBudget}
	return scriptCall{
		keys: []string{
			s.layout.Head(threadID),
			s.layout.Threads(shard),
			s.layout.GC(shard),
			s.layout.Events(threadID),
			s.layout.Feed(shard),
		},
		args: append(args, s.eventSpec(ctx, event...)...),
	}
}
