package redissaver

import (
	"context"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// collectBudget is the number of checkpoints one mark step, or of values
// one sweep step, of blob_gc.lua examines at most.
const collectBudget = 64

// nsRef names one namespace of one generation of a thread.
type nsRef struct {
	shard            int
	enct, gen, encns string
}

// collectValues removes, from each namespace of refs, the values no
// checkpoint points to any more: blob_gc.lua's mark and sweep steps, one
// step of every unfinished namespace per pipelined round trip.
func (s *Saver) collectValues(ctx context.Context, op string, refs []nsRef) error {
	type job struct {
		nsRef
		phase, cursor string
		token         string // marks the keep set as this job's
	}
	jobs := make([]job, len(refs))
	for i, r := range refs {
		jobs[i] = job{nsRef: r, phase: "mark", token: keys.NewGen()}
	}
	for len(jobs) > 0 {
		calls := make([]scriptCall, len(jobs))
		for i, j := range jobs {
			calls[i] = scriptCall{
				keys: []string{s.layout.ShardBase(j.shard) + "t:" + j.enct},
				args: []any{s.layout.ShardBase(j.shard), j.enct, j.gen, j.encns, j.phase, j.cursor, collectBudget, j.token},
			}
		}
		cmds, err := s.runPipelined(ctx, scriptrun.BlobGC, calls)
		if err != nil {
			return scriptErr(op+": collect values", err)
		}
		next := jobs[:0:0]
		var d reply
		for i, cmd := range cmds {
			res, err := cmd.Slice()
			if err != nil {
				return scriptErr(op+": collect values", err)
			}
			if len(res) != 3 {
				return corrupt("blob gc reply %v", res)
			}
			if phase := d.str(res[0]); phase != "" {
				j := jobs[i]
				j.phase, j.cursor = phase, d.str(res[1])
				next = append(next, j)
			}
		}
		if d.err != nil {
			return d.err
		}
		jobs = next
	}
	return nil
}
