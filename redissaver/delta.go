package redissaver

import (
	"context"
	"errors"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/keys"
	"github.com/redis/go-redis/v9"
)

// deltaBudget is the number of ancestors one step of DeltaChannelHistory
// visits at most.
const deltaBudget = 250

// DeltaChannelHistory returns, for each of channels, the writes since its
// nearest seed: it walks from the parent of the checkpoint cfg (the latest
// one when cfg.CheckpointID is "") up the parent chain, collecting each
// ancestor's writes to the channel, and stops for that channel at the first
// ancestor that holds a value for it (a checkpoint.DeltaSnapshot or a plain
// value, returned as Seed; that ancestor's own writes are included). Each
// channel stops independently; the target's own writes are never included.
// Writes come oldest first, within a checkpoint by (task ID, index).
// HasSeed is false only when the chain really ends (a root, or a parent
// deleted by DeleteForRuns or Prune) before a seed.
//
// The walk visits at most deltaBudget ancestors per script call, so a chain
// of n ancestors takes n/deltaBudget+1 round trips. No channels gives an
// empty map without calling Redis. Errors: checkpoint.ErrNotFound when the
// target does not exist; checkpoint.ErrDataLoss when an ancestor its
// namespace index names, a value, or the thread's head is missing, when the
// parent chain cycles, or when the thread is deleted or replaced during the
// walk; checkpoint.ErrInvalidConfig for a bad thread or namespace.
func (s *Saver) DeltaChannelHistory(ctx context.Context, cfg checkpoint.Config, channels []string) (map[string]checkpoint.DeltaHistory, error) {
	out := make(map[string]checkpoint.DeltaHistory, len(channels))
	if len(channels) == 0 {
		return out, nil
	}
	if err := validateAddress(cfg); err != nil {
		return nil, err
	}
	if cfg.CheckpointID != "" && keys.ValidateID(cfg.CheckpointID) != nil {
		return nil, notFound("checkpoint %q", cfg.CheckpointID)
	}
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	shard := s.layout.Shard(th)
	open := slices.Clone(channels)
	slices.Sort(open)
	open = slices.Compact(open)
	// Per channel: the seed and the groups of writes, nearest the target first.
	type acc struct {
		seed   any
		has    bool
		groups []any
	}
	accs := make(map[string]*acc, len(open))
	for _, ch := range open {
		accs[ch] = &acc{}
	}
	target, gen, cursor := cfg.CheckpointID, "", ""
	seen := map[string]bool{}
	for {
		args := make([]any, 0, 7+len(open))
		args = append(args, s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), target, cursor, gen, deltaBudget)
		for _, ch := range open {
			args = append(args, ch)
		}
		res, err := s.run(ctx, scriptrun.DeltaHistory, []string{s.layout.Head(th), s.layout.Threads(shard)}, args...).Slice()
		if errors.Is(err, redis.Nil) {
			return nil, notFound("checkpoint %q of thread %q", cfg.CheckpointID, th)
		}
		if redis.HasErrorPrefix(err, "CHANGED") {
			return nil, dataLoss("delta channel history: the thread was deleted or replaced during the walk")
		}
		if err != nil {
			return nil, scriptErr("delta channel history", err)
		}
		if len(res) != 3+len(open) {
			return nil, corrupt("delta history reply of %d entries for %d channels", len(res), len(open))
		}
		id, ok1 := res[0].(string)
		g, ok2 := res[1].(string)
		next, ok3 := res[2].(string)
		if !ok1 || !ok2 || !ok3 {
			return nil, corrupt("delta history reply head %v", res[:3])
		}
		target, gen = id, g
		still := open[:0:0]
		for i, ch := range open {
			parts, ok := res[3+i].([]any)
			if !ok || len(parts) == 0 {
				return nil, corrupt("delta history entry of %T", res[3+i])
			}
			a := accs[ch]
			a.groups = append(a.groups, parts[1:]...)
			if seed, ok := parts[0].(string); ok {
				v, err := s.decodeValue(seed)
				if err != nil {
					return nil, err
				}
				a.seed, a.has = v, true
			} else {
				still = append(still, ch)
			}
		}
		if next == "" || len(still) == 0 {
			break
		}
		if seen[next] {
			return nil, dataLoss("delta channel history: the parent chain cycles through %q", next)
		}
		seen[next] = true
		open, cursor = still, next
	}
	for _, ch := range channels {
		a := accs[ch]
		h, err := s.decodeHistory(a.seed, a.has, a.groups)
		if err != nil {
			return nil, err
		}
		out[ch] = h
	}
	return out, nil
}

// decodeHistory decodes the groups of writes of one channel, nearest the
// target first, into its history.
func (s *Saver) decodeHistory(seed any, hasSeed bool, groups []any) (checkpoint.DeltaHistory, error) {
	h := checkpoint.DeltaHistory{Seed: seed, HasSeed: hasSeed}
	groups = slices.Clone(groups)
	slices.Reverse(groups)
	for _, g := range groups {
		pairs, ok := g.([]any)
		if !ok || len(pairs)%2 != 0 {
			return h, corrupt("delta history writes of %T", g)
		}
		ws := make([]storedWrite, 0, len(pairs)/2)
		for i := 0; i < len(pairs); i += 2 {
			f, _ := pairs[i].(string)
			v, _ := pairs[i+1].(string)
			w, err := s.decodeWrite(f, v)
			if err != nil {
				return h, err
			}
			ws = append(ws, w)
		}
		h.Writes = append(h.Writes, sortedWrites(ws)...)
	}
	return h, nil
}
