package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// xautoclaim runs XAUTOCLAIM and decodes its reply, the IDs of deleted
// entries included (Redis 7 returns them as a third element; miniredis and
// Redis 6.2 do not). It is sent with Do, so that the module works with
// go-redis v9.16, which has no XAutoClaimWithDeleted.
func xautoclaim(ctx context.Context, rdb redis.UniversalClient, stream, group, consumer string, minIdle time.Duration, start string, count int64) (msgs []redis.XMessage, next string, deleted []string, err error) {
	res, err := rdb.Do(ctx, "XAUTOCLAIM", stream, group, consumer, minIdle.Milliseconds(), start, "COUNT", count).Slice()
	if err != nil {
		return nil, "", nil, err
	}
	if len(res) < 2 {
		return nil, "", nil, fmt.Errorf("%w: XAUTOCLAIM reply of %d items", ErrMalformedEvent, len(res))
	}
	next, ok := res[0].(string)
	entries, ok2 := res[1].([]any)
	if !ok || !ok2 {
		return nil, "", nil, fmt.Errorf("%w: XAUTOCLAIM reply %v", ErrMalformedEvent, res)
	}
	for _, e := range entries {
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			continue // Redis 6.2 gives nil for an entry deleted meanwhile
		}
		id, _ := pair[0].(string)
		flat, _ := pair[1].([]any)
		values := make(map[string]any, len(flat)/2)
		for i := 0; i+1 < len(flat); i += 2 {
			if f, ok := flat[i].(string); ok {
				values[f] = flat[i+1]
			}
		}
		msgs = append(msgs, redis.XMessage{ID: id, Values: values})
	}
	if len(res) > 2 {
		if ids, ok := res[2].([]any); ok {
			for _, id := range ids {
				if s, ok := id.(string); ok {
					deleted = append(deleted, s)
				}
			}
		}
	}
	return msgs, next, deleted, nil
}
