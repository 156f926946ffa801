package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/storetest"
	"github.com/redis/go-redis/v9"
)

// newStore returns a store with a fresh prefix on rdb.
func newStore(t testing.TB, rdb redis.UniversalClient, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	opts.Prefix = redistest.Prefix(t)
	s, err := redisstore.New(context.Background(), rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// miniClock keeps a miniredis's TIME running with the wall clock plus the
// time the test moved forward, and moves TTLs forward with it: TIME and key
// expiry then agree, as on a real server.
type miniClock struct {
	mr     *miniredis.Miniredis
	mu     sync.Mutex
	offset time.Duration
}

func (c *miniClock) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mr.SetTime(time.Now().Add(c.offset))
}

func (c *miniClock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	c.mr.FastForward(d)
	c.tick()
}

func (c *miniClock) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *miniClock) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.tick()
		return next(ctx, cmd)
	}
}

func (c *miniClock) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.tick()
		return next(ctx, cmds)
	}
}

// miniEnv is the kit's Env on one miniredis shared by the cases (each with
// its own prefix). Advance is instant there, so the unit is an hour.
func miniEnv(t *testing.T) storetest.Env {
	env, _ := miniKit(t)
	return env
}

// miniKit is miniEnv and its client.
func miniKit(t *testing.T) (storetest.Env, redis.UniversalClient) {
	mr, rdb := redistest.Mini(t)
	clock := &miniClock{mr: mr}
	clock.tick()
	rdb.AddHook(clock)
	return storetest.Env{
		New:     func(t *testing.T, o redisstore.Options) *redisstore.Store { return newStore(t, rdb, o) },
		Advance: func(t *testing.T, d time.Duration) { clock.advance(d) },
		Unit:    time.Hour,
	}, rdb
}

// realEnv is the kit's Env on the shared real redis-server: time moves by
// sleeping.
func realEnv(t *testing.T) storetest.Env {
	rdb := redistest.Real(t)
	return storetest.Env{
		New:     func(t *testing.T, o redisstore.Options) *redisstore.Store { return newStore(t, rdb, o) },
		Advance: func(t *testing.T, d time.Duration) { time.Sleep(d) },
		Unit:    250 * time.Millisecond,
	}
}

func TestKitMiniredis(t *testing.T) { storetest.Run(t, miniEnv(t)) }

func TestKitRealRedis(t *testing.T) { storetest.Run(t, realEnv(t)) }
