package redissaver

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
)

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
// checkpoint.PruneDelete removes the threads, as DeleteThread does.
//
// With PruneKeepLatest each thread is one atomic script, and the threads run
// in one pipelined round trip; its work grows with the thread (not yet
// bounded). PruneDelete deletes each thread as DeleteThread does, in bounded
// steps. An empty list and unknown threads are no-ops. Errors:
// checkpoint.ErrInvalidConfig for an unknown strategy or an empty or
// over-long thread ID.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy checkpoint.PruneStrategy) error {
	if strategy != checkpoint.PruneKeepLatest && strategy != checkpoint.PruneDelete {
		return invalidConfig("unknown prune strategy %q", strategy)
	}
	calls := make([]scriptCall, 0, len(threadIDs))
	for _, th := range threadIDs {
		if err := keys.ValidateThreadID(th); err != nil {
			return invalidConfig("%v", err)
		}
		calls = append(calls, s.threadCall(th, evType, "pruned", evThread, keys.Encode(th), evStrategy, string(strategy)))
	}
	if len(calls) == 0 {
		return nil
	}
	if strategy == checkpoint.PruneDelete {
		for _, th := range threadIDs {
			if err := s.DeleteThread(ctx, th); err != nil {
				return fmt.Errorf("redissaver: prune (%s): %w", strategy, err)
			}
		}
		return nil
	}
	if _, err := s.runPipelined(ctx, scripts.Prune, calls); err != nil {
		return scriptErr(fmt.Sprintf("prune (%s)", strategy), err)
	}
	return nil
}

// threadCall builds the keys and arguments shared by delete_thread.lua and
// prune.lua, with the given event fields.
func (s *Saver) threadCall(threadID string, event ...string) scriptCall {
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
		args: append(args, s.eventSpec(event...)...),
	}
}
