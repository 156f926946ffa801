package redissaver

import (
	"context"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// runBudget is the number of run index members one step of DeleteForRuns
// acts on at most.
const runBudget = 64

// DeleteForRuns deletes every checkpoint, in every thread and namespace,
// whose metadata "run_id" is one of runIDs, with its pending writes and the
// channel values no remaining checkpoint points to. Checkpoints are found
// through a run index kept by Put, never by scanning keys. A child whose
// parent is deleted stays, with its ParentConfig still naming the parent.
//
// It works in bounded steps: each step scans about runBudget members of the
// index of one run in one shard and deletes their checkpoints (each
// checkpoint with its index entries, atomically), and the steps of every
// (shard, run) go in one pipelined round trip. Checkpoints put to the runs
// during the call may or may not be deleted. Then the values the deleted
// checkpoints alone pointed to are removed, per namespace, in bounded mark
// and sweep steps (blob_gc.lua). Readers meanwhile see each checkpoint
// either whole or gone.
// Cut off, the call leaves a state readers handle (some checkpoints of the
// runs deleted, some values not yet removed); repeat it to finish: it is
// idempotent. Empty and unknown run IDs are no-ops; run IDs longer than
// keys.MaxRunIDLen cannot have been indexed and are ignored.
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) (err error) {
	ctx, call := s.begin(ctx, opDeleteForRuns)
	defer func() { call.end(err) }()
	call.set(attrRuns.Int(len(runIDs)))
	var valid []string
	for _, r := range runIDs {
		if keys.ValidateRunID(r) == nil {
			valid = append(valid, r)
		}
	}
	if len(valid) == 0 {
		return nil
	}
	type runShard struct {
		shard  int
		key    string
		cursor string // the SSCAN cursor of its run index
	}
	var pending []runShard
	for n := 0; n < s.layout.Shards(); n++ {
		for _, r := range valid {
			pending = append(pending, runShard{n, s.layout.Run(n, r), "0"})
		}
	}
	maxlen, feedMaxlen := s.eventBounds()
	names := joinNames(valid)
	trace := s.traceArgs(ctx)
	touched := map[nsRef]bool{}
	var refs []nsRef
	for len(pending) > 0 {
		calls := make([]scriptCall, len(pending))
		for i, p := range pending {
			calls[i] = scriptCall{keys: []string{p.key}, args: append([]any{s.layout.ShardBase(p.shard), runBudget, maxlen, feedMaxlen, names, p.cursor,
				s.opts.Events.RetainDeleted.Milliseconds()}, trace...)}
		}
		cmds, err := s.runPipelined(ctx, scriptrun.DeleteRuns, calls)
		if err != nil {
			return scriptErr("delete for runs", err)
		}
		next := pending[:0:0]
		for i, cmd := range cmds {
			res, err := cmd.Slice()
			if err != nil {
				return scriptErr("delete for runs", err)
			}
			cursor, ok := res[0].(string)
			if !ok || len(res)%3 != 1 {
				return corrupt("delete runs reply %v", res)
			}
			for j := 1; j+2 < len(res); j += 3 {
				var d reply
				r := nsRef{shard: pending[i].shard, enct: d.str(res[j]), gen: d.str(res[j+1]), encns: d.str(res[j+2])}
				if d.err != nil {
					return d.err
				}
				if !touched[r] {
					touched[r] = true
					refs = append(refs, r)
				}
			}
			if cursor != "0" {
				next = append(next, runShard{pending[i].shard, pending[i].key, cursor})
			}
		}
		pending = next
	}
	return s.collectValues(ctx, "delete for runs", refs)
}
