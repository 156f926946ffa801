package redissaver

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/internal/meta"
	"github.com/redis/go-redis/v9"
)

// recoverEmptied handles a script's DATALOSS error: when the prefix holds
// none of the keys a written prefix always has (Redis restarted without
// persistence, FLUSHALL, a failover to an empty replica), every checkpoint
// it held is gone. The saver then creates the prefix again (its shard
// registries' markers and meta key, as New does), publishes an event of
// type "prefix_reset" on every shard's feed, and answers this call with
// ErrPrefixReset; later calls work on the new, empty prefix: threads
// written before read as not found. Any other loss is left as the script
// reported it. It returns the error to answer.
func (s *Saver) recoverEmptied(ctx context.Context, err error) error {
	if !redis.HasErrorPrefix(err, "DATALOSS") {
		return err
	}
	emptied, eerr := meta.Emptied(ctx, s.rdb, s.layout)
	if eerr != nil || !emptied {
		return err
	}
	if cerr := meta.Ensure(ctx, s.rdb, s.layout, true); cerr != nil {
		return fmt.Errorf("%w (%v); creating it again failed: %v", ErrPrefixReset, err, cerr)
	}
	if !s.opts.Events.Disabled {
		pipe := s.rdb.Pipeline()
		for n := range s.layout.Shards() {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: s.layout.Feed(n), MaxLen: s.opts.Events.FeedMaxLen, Approx: true,
				Values: []any{"t", "prefix_reset"}})
		}
		if _, perr := pipe.Exec(ctx); perr != nil {
			return fmt.Errorf("%w (%v); its reset event: %v", ErrPrefixReset, err, perr)
		}
	}
	return fmt.Errorf("%w (%v)", ErrPrefixReset, err)
}
