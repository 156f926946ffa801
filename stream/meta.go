package stream

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/internal/meta"
)

// checkMeta compares the prefix's meta key with the subscriber's layout: a
// prefix written with another shard count (or storage format) publishes to
// feeds and streams this subscriber does not read, so it would receive
// nothing without a word. A mismatch is an error wrapping
// checkpoint.ErrInvalidConfig; a missing meta key (nothing written yet) is
// fine; a Redis error is returned wrapped, and the caller may try again.
// One round trip.
func (s *Subscriber) checkMeta(ctx context.Context) error {
	if err := meta.Ensure(ctx, s.rdb, s.layout, false); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	return nil
}
