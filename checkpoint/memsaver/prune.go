package memsaver

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
)

// Prune applies strategy to each thread of threadIDs.
// checkpoint.PruneKeepLatest keeps, in each namespace, the checkpoint with
// the greatest ID with its pending writes and every channel value its
// channel versions reference (even values written by older checkpoints)
// and, for each channel it has a version of but no value for (a delta
// channel), the ancestors from its parent up to the nearest one holding a
// value for that channel, so DeltaChannelHistory still finds its seed (as
// redissaver does). It deletes the rest. checkpoint.PruneDelete deletes the threads. An empty
// list, empty and unknown thread IDs are no-ops. An unknown strategy or a
// thread ID longer than MaxNameLen gives an error wrapping
// checkpoint.ErrInvalidConfig, before anything is deleted.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy checkpoint.PruneStrategy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if strategy != checkpoint.PruneKeepLatest && strategy != checkpoint.PruneDelete {
		return fmt.Errorf("memsaver: prune: unknown strategy %q: %w", strategy, checkpoint.ErrInvalidConfig)
	}
	for _, tid := range threadIDs {
		if err := checkName("thread id", tid); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tid := range threadIDs {
		th := s.threads[tid]
		if th == nil {
			continue
		}
		if strategy == checkpoint.PruneDelete {
			delete(s.threads, tid)
			continue
		}
		for _, n := range th.namespaces {
			keep := n.kept()
			for id := range n.checkpoints {
				if !keep[id] {
					delete(n.checkpoints, id)
				}
			}
			n.collectGarbage()
		}
	}
	return nil
}

// kept returns the IDs of the checkpoints PruneKeepLatest keeps in n: its
// latest and, for each channel the latest has a version of but no value for,
// the ancestors from its parent up to the nearest one holding a value for
// that channel (the walk ends at a parent that no longer exists, or one
// already kept).
func (n *namespace) kept() map[string]bool {
	latest := n.latest()
	if latest == nil {
		return nil
	}
	keep := map[string]bool{latest.id: true}
	open := map[string]bool{}
	for ch, ver := range latest.versions {
		if b, ok := n.blobs[blobKey{ch, ver}]; ok && b.empty {
			open[ch] = true
		}
	}
	for id := latest.parentID; id != "" && len(open) > 0 && !keep[id]; {
		rec := n.checkpoints[id]
		if rec == nil {
			break
		}
		keep[id] = true
		for ch := range open {
			ver, ok := rec.versions[ch]
			if b, stored := n.blobs[blobKey{ch, ver}]; ok && stored && !b.empty {
				delete(open, ch)
			}
		}
		id = rec.parentID
	}
	return keep
}
