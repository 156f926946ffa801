package redissaver

import (
	"context"

	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
)

// DeleteThread removes every checkpoint, pending write, channel value and
// index entry of the thread, in every namespace, in one atomic script (one
// round trip). Deleting an unknown thread is a no-op. The script's time grows
// with the thread's checkpoints (Redis serves nothing else meanwhile).
//
// Errors: checkpoint.ErrInvalidConfig for an empty or over-long thread ID;
// otherwise the Redis error, wrapped.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := keys.ValidateThreadID(threadID); err != nil {
		return invalidConfig("%v", err)
	}
	c := s.threadCall(threadID, evType, "thread_deleted", evThread, keys.Encode(threadID))
	if err := s.run(ctx, scripts.DeleteThread, c.keys, c.args...).Err(); err != nil {
		return redisErr("delete thread", err)
	}
	return nil
}
