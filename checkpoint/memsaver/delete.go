package memsaver

import (
	"bytes"
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
)

// DeleteThread removes every checkpoint, pending write and channel value of
// thread threadID, in every namespace. An unknown thread is a no-op. A
// thread ID longer than MaxNameLen gives an error wrapping
// checkpoint.ErrInvalidConfig.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkName("thread id", threadID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.threads, threadID)
	return nil
}

// DeleteForRuns deletes every checkpoint, in every thread and namespace,
// whose metadata "run_id" is a string equal to one of runIDs, with its
// pending writes, and then the channel values no remaining checkpoint of
// its namespace references. Children of a deleted checkpoint keep their
// parent link. An empty list, empty run IDs and unknown run IDs are no-ops.
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	targets := make([][]byte, 0, len(runIDs))
	for _, r := range runIDs {
		if r == "" {
			continue
		}
		data, err := checkpoint.EncodeMetadataValue(r)
		if err != nil {
			return fmt.Errorf("memsaver: delete for runs: run id %q: %w", r, err)
		}
		targets = append(targets, data)
	}
	if len(targets) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for tid, th := range s.threads {
		for _, n := range th.namespaces {
			deleted := false
			for id, rec := range n.checkpoints {
				if isRun(rec.metadata["run_id"], targets) {
					delete(n.checkpoints, id)
					deleted = true
				}
			}
			if deleted {
				n.collectGarbage()
			}
		}
		s.tidy(tid)
	}
	return nil
}

// isRun reports whether the stored run_id value runID is one of targets
// (canonical JSON, compared byte for byte).
func isRun(runID []byte, targets [][]byte) bool {
	if runID == nil {
		return false
	}
	for _, t := range targets {
		if bytes.Equal(runID, t) {
			return true
		}
	}
	return false
}
