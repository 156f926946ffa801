package memsaver

import (
	"context"
	"fmt"
	"maps"

	"github.com/graphstate/redcheck/checkpoint"
)

// CopyThread copies every checkpoint of thread sourceThreadID, in every
// namespace, to thread targetThreadID: IDs, parent links, metadata, channel
// values and pending writes. The source is unchanged. A source without
// checkpoints is a no-op.
//
// Errors wrap checkpoint.ErrInvalidConfig when either ID is empty or longer
// than MaxNameLen, when they are equal, or when the target thread already has
// checkpoints (a copy never merges into an existing thread).
func (s *Saver) CopyThread(ctx context.Context, sourceThreadID, targetThreadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if sourceThreadID == "" || targetThreadID == "" {
		return fmt.Errorf("memsaver: copy thread: missing thread id: %w", checkpoint.ErrInvalidConfig)
	}
	if err := checkName("source thread id", sourceThreadID); err != nil {
		return err
	}
	if err := checkName("target thread id", targetThreadID); err != nil {
		return err
	}
	if sourceThreadID == targetThreadID {
		return fmt.Errorf("memsaver: copy thread %q onto itself: %w", sourceThreadID, checkpoint.ErrInvalidConfig)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.threads[sourceThreadID]
	if src == nil {
		return nil
	}
	if s.threads[targetThreadID] != nil {
		return fmt.Errorf("memsaver: copy thread: target thread %q already has checkpoints: %w", targetThreadID, checkpoint.ErrInvalidConfig)
	}
	dst := &thread{namespaces: make(map[string]*namespace, len(src.namespaces))}
	for ns, n := range src.namespaces {
		c := &namespace{
			checkpoints: make(map[string]*record, len(n.checkpoints)),
			blobs:       maps.Clone(n.blobs), // stored bytes are never modified
		}
		for id, rec := range n.checkpoints {
			c.checkpoints[id] = rec.clone()
		}
		dst.namespaces[ns] = c
	}
	s.threads[targetThreadID] = dst
	return nil
}

// clone copies rec; stored byte slices are shared, as they are never
// modified.
func (r *record) clone() *record {
	c := *r
	c.versions = cloneVersions(r.versions)
	c.seen = cloneSeen(r.seen)
	c.metadata = maps.Clone(r.metadata)
	c.writes = maps.Clone(r.writes)
	if r.updated != nil {
		c.updated = append([]string(nil), r.updated...)
	}
	return &c
}
