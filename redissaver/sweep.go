package redissaver

import (
	"context"

	"github.com/graphstate/redcheck/internal/scriptrun"
)

// Sweep reclaims the garbage of every shard: it retires the threads whose
// lease (Options.TTL) ran out and reclaims the keys of retired generations
// (deleted, expired or replaced threads), in bounded steps of at most
// reclaimBudget units each, one round trip per step, until nothing due is
// left or ctx ends. It returns the units of work done.
//
// Sweeping is never needed for correctness: an expired thread reads as not
// found at once, and every Put reclaims a little of its shard's garbage. Call
// it from time to time (a ticker in one process is enough) when threads
// expire in shards that see few writes, so their memory comes back.
func (s *Saver) Sweep(ctx context.Context) (units int, err error) {
	ctx, call := s.begin(ctx, opSweep)
	defer func() {
		call.set(attrUnits.Int(units))
		call.end(err)
	}()
	total := 0
	for n := 0; n < s.layout.Shards(); n++ {
		used, err := s.sweepShard(ctx, n, "")
		total += used
		if err != nil {
			return total, redisErr("sweep", err)
		}
	}
	return total, nil
}

// sweepShard runs sweep.lua on shard n (on the queue entry given, or on
// every due one for "") until nothing due is left, or a step makes no
// progress. It returns the units of work done.
func (s *Saver) sweepShard(ctx context.Context, n int, entry string) (int, error) {
	total := 0
	for {
		used, more, err := s.sweepStep(ctx, n, entry)
		total += used
		if err != nil || !more || used == 0 {
			return total, err
		}
	}
}

// sweepStep runs one step of sweep.lua on shard n: on the queue entry given,
// or on every due one for "".
func (s *Saver) sweepStep(ctx context.Context, n int, entry string) (used int, more bool, err error) {
	res, err := s.run(ctx, scriptrun.Sweep, []string{s.layout.Threads(n), s.layout.GC(n)},
		s.layout.ShardBase(n), reclaimBudget, entry).Slice()
	if err != nil {
		return 0, false, err
	}
	if len(res) != 2 {
		return 0, false, corrupt("sweep reply of %d items", len(res))
	}
	u, ok := res[0].(int64)
	m, ok2 := res[1].(int64)
	if !ok || !ok2 {
		return 0, false, corrupt("sweep reply %v", res)
	}
	return int(u), m == 1, nil
}
