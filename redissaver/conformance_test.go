package redissaver_test

import (
	"context"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// newSaver returns a saver with a fresh prefix on rdb, so that every group of
// the kit sees an empty store.
func newSaver(t *testing.T, rdb redis.UniversalClient, opts redissaver.Options) *redissaver.Saver {
	t.Helper()
	opts.Prefix = redistest.Prefix(t)
	opts.AcceptEviction = true
	s, err := redissaver.New(context.Background(), rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceMiniredis(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return newSaver(t, rdb, redissaver.Options{AcceptEviction: true}) })
}

func TestConformanceRealRedis(t *testing.T) {
	rdb := redistest.Real(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return newSaver(t, rdb, redissaver.Options{AcceptEviction: true}) })
}

// One shard takes the single-index path of List over every thread; many
// shards the merged one. Both must pass the whole kit.
func TestConformanceOneShard(t *testing.T) {
	rdb := redistest.Real(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return newSaver(t, rdb, redissaver.Options{AcceptEviction: true, Shards: 1})
	})
}

func TestConformanceSmallPages(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return newSaver(t, rdb, redissaver.Options{AcceptEviction: true, Shards: 3, PageSize: 1})
	})
}

func TestConformanceJSONSerializer(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return newSaver(t, rdb, redissaver.Options{AcceptEviction: true, Serializer: checkpoint.JSONSerializer{}})
	})
}
