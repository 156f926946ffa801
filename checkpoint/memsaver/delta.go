package memsaver

import (
	"context"
	"fmt"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
)

// DeltaChannelHistory returns, for each of channels, the history needed to
// rebuild a delta channel at the checkpoint cfg (cfg.CheckpointID, or the
// latest checkpoint of the thread and namespace when it is "").
//
// The walk starts at the target's parent (the target's own writes are never
// included) and follows the parent links within the thread and namespace.
// At each ancestor, and independently for each channel not yet seeded, the
// ancestor's writes to the channel are collected; then, if the ancestor
// holds a value for the channel (its version is in the channel versions and
// a non-empty value is stored for it), that value, a checkpoint.DeltaSnapshot
// or a plain value as stored, becomes the seed and the channel's walk stops.
// The seed ancestor's own writes are therefore included. Writes are returned
// oldest checkpoint first, by (task ID, index) within a checkpoint. A channel
// whose walk reaches the root, or a parent that no longer exists, has
// HasSeed false. Every requested channel has an entry.
//
// No channels gives an empty map. Errors wrap checkpoint.ErrNotFound when the
// target does not exist (or cfg.ThreadID is ""), checkpoint.ErrInvalidConfig
// for an over-long thread ID or namespace, and checkpoint.ErrSerialization
// when a stored value cannot be decoded.
func (s *Saver) DeltaChannelHistory(ctx context.Context, cfg checkpoint.Config, channels []string) (map[string]checkpoint.DeltaHistory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkConfigNames(cfg); err != nil {
		return nil, err
	}
	out := make(map[string]checkpoint.DeltaHistory, len(channels))
	if len(channels) == 0 {
		return out, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.namespaceOf(cfg.ThreadID, cfg.CheckpointNS)
	target := n.find(cfg.CheckpointID)
	if cfg.ThreadID == "" || target == nil {
		return nil, fmt.Errorf("memsaver: delta channel history: checkpoint %q of thread %q, namespace %q: %w",
			cfg.CheckpointID, cfg.ThreadID, cfg.CheckpointNS, checkpoint.ErrNotFound)
	}

	// groups[ch] holds the writes of each visited checkpoint, newest first.
	groups := make(map[string][][]checkpoint.PendingWrite, len(channels))
	remaining := map[string]bool{}
	for _, ch := range channels {
		remaining[ch] = true
		out[ch] = checkpoint.DeltaHistory{}
	}
	visited := map[string]bool{target.id: true}
	for id := target.parentID; id != "" && len(remaining) > 0 && !visited[id]; {
		visited[id] = true
		rec := n.checkpoints[id]
		if rec == nil {
			break
		}
		for ch := range remaining {
			ws, err := s.pendingWrites(rec, isChannel(ch))
			if err != nil {
				return nil, err
			}
			groups[ch] = append(groups[ch], ws)
			ver, ok := rec.versions[ch]
			if !ok {
				continue
			}
			seed, ok, err := s.value(n, ch, ver)
			if err != nil {
				return nil, err
			}
			if ok {
				h := out[ch]
				h.Seed, h.HasSeed = seed, true
				out[ch] = h
				delete(remaining, ch)
			}
		}
		id = rec.parentID
	}
	for ch, gs := range groups {
		var writes []checkpoint.PendingWrite
		for _, g := range slices.Backward(gs) {
			writes = append(writes, g...)
		}
		h := out[ch]
		h.Writes = writes
		out[ch] = h
	}
	return out, nil
}
