package stream_test

import (
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
	} {
		t.Run(name, func(t *testing.T) { body(t, c.Client(t)) })
	}
}
