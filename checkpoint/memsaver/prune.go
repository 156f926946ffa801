package memsaver

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
)

// Prune applies strategy to each thread of threadIDs.
// checkpoint.PruneKeepLatest keeps, in each namespace, the checkpoint with
// the greatest ID with its pending writes and every channel value its
// channel versions reference (even values written by older checkpoints),
// and deletes the rest. checkpoint.PruneDelete deletes the threads. An empty
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
			keep := n.latest()
			for id := range n.checkpoints {
				if id != keep.id {
					delete(n.checkpoints, id)
				}
			}
			n.collectGarbage()
		}
	}
	return nil
}
