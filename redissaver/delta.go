package redissaver

import (
	"context"
	"errors"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
	"github.com/redis/go-redis/v9"
)

// DeltaChannelHistory returns, for each of channels, the writes since its
// nearest seed: it walks from the parent of the checkpoint cfg (the latest
// one when cfg.CheckpointID is "") up the parent chain, collecting each
// ancestor's writes to the channel, and stops for that channel at the first
// ancestor that holds a value for it (a checkpoint.DeltaSnapshot or a plain
// value, returned as Seed; that ancestor's own writes are included). Each
// channel stops independently; the target's own writes are never included.
// Writes come oldest first, within a checkpoint by (task ID, index).
//
// The whole walk is one script call, however long the chain. No channels
// gives an empty map without calling Redis. Errors: checkpoint.ErrNotFound
// when the target does not exist; checkpoint.ErrInvalidConfig for a bad
// thread or namespace.
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
	args := make([]any, 0, 2+len(channels))
	args = append(args, s.layout.NamespaceBase(th, ns), cfg.CheckpointID)
	for _, ch := range channels {
		args = append(args, ch)
	}
	res, err := s.run(ctx, scripts.DeltaHistory, []string{s.layout.Index(th, ns), s.layout.Blobs(th, ns)}, args...).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, notFound("checkpoint %q of thread %q", cfg.CheckpointID, th)
	}
	if err != nil {
		return nil, redisErr("delta channel history", err)
	}
	if len(res) != len(channels) {
		return nil, corrupt("delta history reply of %d entries for %d channels", len(res), len(channels))
	}
	for i, ch := range channels {
		h, err := s.decodeHistory(res[i])
		if err != nil {
			return nil, err
		}
		out[ch] = h
	}
	return out, nil
}

// decodeHistory decodes {seed or nil, group, group, ...} with the groups
// nearest the target first.
func (s *Saver) decodeHistory(entry any) (checkpoint.DeltaHistory, error) {
	var h checkpoint.DeltaHistory
	parts, ok := entry.([]any)
	if !ok || len(parts) == 0 {
		return h, corrupt("delta history entry of %T", entry)
	}
	if seed, ok := parts[0].(string); ok {
		v, err := s.decodeValue(seed)
		if err != nil {
			return h, err
		}
		h.Seed, h.HasSeed = v, true
	}
	groups := parts[1:]
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
