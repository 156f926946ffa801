package redissaver

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// reclaimBudget is the work one reclaim step may do: checkpoints dropped
// (each a handful of O(log n) commands and an UNLINK) or namespaces
// unlinked. Measured at well under 20 ms per step; see
// docs/storage-format.md.
const reclaimBudget = 64

// DeleteThread removes every checkpoint, pending write, channel value and
// index entry of the thread, in every namespace.
//
// The first script makes the whole thread invisible at once (its
// generation is retired: readers see no thread, a new Put starts a new one)
// and announces the deletion; its keys are then reclaimed in bounded steps
// of at most reclaimBudget checkpoints each, one round trip per step, until
// none is left. If the call is cut off (a cancelled context, a lost
// connection), the thread stays deleted and what is left of its keys is
// queued: Sweep, or the writes that follow in its shard, finish the reclaim.
// Deleting an unknown thread is a no-op.
//
// Errors: checkpoint.ErrInvalidConfig for an empty or over-long thread ID;
// checkpoint.ErrDataLoss when the thread's head is missing while its
// registry entry remains (the entry is removed, but the keys of its
// generation cannot be found); otherwise the Redis error, wrapped.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	ctx, call := s.begin(ctx, opDeleteThread)
	call.address(threadID, "", "")
	return call.end(s.deleteThread(ctx, threadID))
}

// deleteThread is DeleteThread (and Prune's PruneDelete) in the caller's span.
func (s *Saver) deleteThread(ctx context.Context, threadID string) error {
	if err := keys.ValidateThreadID(threadID); err != nil {
		return invalidConfig("%v", err)
	}
	c := s.threadCall(ctx, threadID, evType, "thread_deleted", evThread, keys.Encode(threadID))
	res, err := s.run(ctx, scriptrun.DeleteThread, c.keys, c.args...).Slice()
	if err != nil {
		return scriptErr("delete thread", err)
	}
	entry, done, err := deleteReply(res)
	if err != nil {
		return err
	}
	if done {
		return nil
	}
	if _, err := s.sweepShard(ctx, s.layout.Shard(threadID), entry); err != nil {
		return fmt.Errorf("redissaver: delete thread: reclaim: %w", err)
	}
	return nil
}

// deleteReply decodes {count, queue entry, done} of delete_thread.lua.
func deleteReply(res []any) (entry string, done bool, err error) {
	if len(res) != 3 {
		return "", false, corrupt("delete thread reply of %d items", len(res))
	}
	entry, ok := res[1].(string)
	d, ok2 := res[2].(int64)
	if !ok || !ok2 {
		return "", false, corrupt("delete thread reply %v", res)
	}
	return entry, d == 1, nil
}
