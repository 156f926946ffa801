package redissaver

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphstate/redcheck/internal/meta"
	"github.com/redis/go-redis/v9"
)

// recoverEmptied handles a script's DATALOSS error: when the prefix holds
// none of the keys a written prefix always has (Redis restarted without
// persistence, FLUSHALL, a failover to an empty replica), every checkpoint
// it held is gone. The saver then creates the prefix again (reset) and
// answers this call with ErrPrefixReset; later calls work on the new, empty
// prefix: threads written before read as not found. Any other loss is left
// as the script reported it, and so is every loss when the server may evict
// the saver's keys (Options.AcceptEviction): keys evicted one by one can
// leave the prefix looking empty while threads' data remain, which a new
// prefix would hide; Reinitialize is then the operator's call. It returns
// the error to answer.
func (s *Saver) recoverEmptied(ctx context.Context, err error) error {
	if !redis.HasErrorPrefix(err, "DATALOSS") || s.opts.AcceptEviction {
		return err
	}
	emptied, eerr := meta.Emptied(ctx, s.rdb, s.layout)
	if eerr != nil || !emptied {
		return err
	}
	if rerr := s.reset(ctx); rerr != nil {
		return fmt.Errorf("%w (%v); creating it again failed: %v", ErrPrefixReset, err, rerr)
	}
	return fmt.Errorf("%w (%v)", ErrPrefixReset, err)
}

// Reinitialize creates the saver's prefix again when Redis lost it whole
// (restarted without persistence, FLUSHALL, a failover to an empty
// replica): its shard registries' markers and meta key, as New does for a
// new prefix, and an event of type "prefix_reset" on every shard's feed.
// It reports whether it did. A saver does this by itself at the first call
// that meets the loss, unless Options.AcceptEviction is set (docs/
// operations.md, "Redis restarted empty"). A prefix that still holds its
// meta key, a registry or a shard index is left alone (false, nil); one
// whose meta key is gone while a registry lists threads is refused with
// checkpoint.ErrDataLoss, as New refuses it.
func (s *Saver) Reinitialize(ctx context.Context) (reset bool, err error) {
	ctx, call := s.begin(ctx, opReinitialize)
	defer func() {
		call.set(attrReset.Bool(reset))
		if reset {
			call.log(kindPrefixReset, errReinitialized)
		}
		call.end(err)
	}()
	sent(ctx, 0)
	emptied, err := meta.Emptied(ctx, s.rdb, s.layout)
	if err != nil || !emptied {
		return false, err
	}
	if err := s.reset(ctx); err != nil {
		return false, err
	}
	return true, nil
}

// errReinitialized is what the log of a Reinitialize that created the
// prefix again says.
var errReinitialized = errors.New("redissaver: Reinitialize found the prefix emptied and created it again")

// reset writes the prefix anew and announces it on every feed.
func (s *Saver) reset(ctx context.Context) error {
	if err := meta.Ensure(ctx, s.rdb, s.layout, true); err != nil {
		return err
	}
	if !s.opts.Events.Disabled {
		pipe := s.rdb.Pipeline()
		for n := range s.layout.Shards() {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: s.layout.Feed(n), MaxLen: s.opts.Events.FeedMaxLen, Approx: true,
				Values: []any{"t", "prefix_reset"}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("redissaver: prefix_reset events: %w", err)
		}
	}
	return nil
}
