package redissaver

import (
	"context"

	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
)

// DeleteForRuns deletes every checkpoint, in every thread and namespace,
// whose metadata "run_id" is one of runIDs, with its pending writes and the
// channel values no remaining checkpoint points to. Checkpoints are found
// through a run index kept by Put, never by scanning keys. A child whose
// parent is deleted stays, with its ParentConfig still naming the parent.
//
// Each shard is one atomic script; the shards run in one pipelined round
// trip (one per node on a Cluster), so a failure can leave some shards done
// and others not: the call is idempotent, repeat it. Empty and unknown run
// IDs are no-ops; run IDs longer than keys.MaxRunIDLen cannot have been
// indexed and are ignored.
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	perShard := map[int][]string{}
	var valid []string
	for _, r := range runIDs {
		if keys.ValidateRunID(r) != nil {
			continue
		}
		valid = append(valid, r)
		for n := 0; n < s.layout.Shards(); n++ {
			perShard[n] = append(perShard[n], s.layout.Run(n, r))
		}
	}
	if len(perShard) == 0 {
		return nil
	}
	ev := s.eventSpec()
	calls := make([]scriptCall, 0, len(perShard))
	for n, runKeys := range perShard {
		calls = append(calls, scriptCall{
			keys: append([]string{s.layout.All(n)}, runKeys...),
			args: []any{s.layout.ShardBase(n), ev[0], ev[1], joinNames(valid)},
		})
	}
	if _, err := s.runPipelined(ctx, scripts.DeleteRuns, calls); err != nil {
		return scriptErr("delete for runs", err)
	}
	return nil
}
