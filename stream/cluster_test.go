package stream_test

import (
	"context"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestStreamsCluster runs the publishing, subscription and consumer-group
// tests on a real local Redis Cluster (3 masters, 3 replicas; make
// test-cluster). Each thread's stream and each shard's feed live in the
// shard's slot, so every write and its event stay one atomic script; a
// subscription to every thread reads each shard's feed with its own blocking
// read (one command cannot read streams of several slots), and still gets
// every event.
func TestStreamsCluster(t *testing.T) {
	redistest.RequireCluster(t)
	c := redistest.StartCluster(t, 3, 1)
	for name, body := range map[string]func(t *testing.T, rdb redis.UniversalClient){
		"every_write_announced":     everyWriteAnnounced,
		"delete_and_prune":          deleteAndPruneAnnounced,
		"subscribe_live":            subscribeLive,
		"resume_exactly_once":       resumeExactlyOnceBody,
		"consume_acks":              consumeAcks,
		"consumer_dies_redelivered": consumerDiesEventsRedelivered,
		"dead_letter_and_panics":    consumeDeadLetterAndPanics,
		"trimmed_cursor":            subscribeFromTrimmedCursor,
		"group_deleted":             groupDeletedWhileConsuming,
		"pending_trimmed":           pendingTrimmed,
		"subscriptions_pool":        subscriptionsLeavePoolAlone,
		"dead_letter_bounded":       deadLetterBounded,
		"value_streams_bounded":     valueStreamsBounded,
		"group_behind_trim":         consumeGroupBehindATrim,
		"stream_rewritten":          subscribeStreamRewritten,
		"since_trimmed":             subscribeSinceTrimmed,
		"gap_model":                 gapModel,
		"consume_gap_model":         consumeGapModel,
		"consume_lag":               consumeLag,
	} {
		t.Run(name, func(t *testing.T) { body(t, c.Client(t)) })
	}
	// Data loss last: it flushes every master.
	flush := func(rdb *redis.ClusterClient) func() {
		return func() {
			err := rdb.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
				return m.FlushAll(ctx).Err()
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("data_loss/subscribe", func(t *testing.T) { rdb := c.Client(t); subscribeAfterLoss(t, rdb, flush(rdb)) })
	t.Run("data_loss/consume", func(t *testing.T) { rdb := c.Client(t); consumeAfterLoss(t, rdb, flush(rdb)) })
}
