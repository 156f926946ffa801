package eino_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/adapters/eino/internal/redisproc"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

func TestMain(m *testing.M) {
	code := m.Run()
	shared.stop()
	os.Exit(code)
}

// tier is a Redis the tests run on: an in-process miniredis, or a real
// redis-server (REDIS_URL, else one started from PATH for the test binary).
type tier struct {
	name string
	// url reaches the server from another client or process.
	url string
	// advance moves the server's clock forward: miniredis's by SetTime, a
	// real server's by sleeping.
	advance func(d time.Duration)
	// ttl is a lease short enough to wait out on the tier.
	ttl time.Duration
	// mini is the miniredis of the miniredis tier, nil on the real one.
	mini *miniredis.Miniredis
}

// tiers runs f on miniredis and on a real Redis, each as a subtest.
func tiers(t *testing.T, f func(t *testing.T, tr tier)) {
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		now := time.Now()
		mr.SetTime(now)
		var mu sync.Mutex
		f(t, tier{name: "miniredis", url: "redis://" + mr.Addr(), mini: mr, ttl: time.Hour, advance: func(d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(d)
			mr.SetTime(now)
		}})
	})
	t.Run("redis", func(t *testing.T) {
		f(t, tier{name: "redis", url: realURL(t), ttl: 1500 * time.Millisecond, advance: time.Sleep})
	})
}

// client returns a new client to the tier's server, closed with the test.
func (tr tier) client(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(tr.url)
	if err != nil {
		t.Fatal(err)
	}
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// saver returns a new saver on a new client of the tier: what a new
// process would open. miniredis cannot tell its eviction policy, so the
// saver accepts it there.
func (tr tier) saver(t testing.TB, opts redissaver.Options) *redissaver.Saver {
	t.Helper()
	opts.AcceptEviction = opts.AcceptEviction || tr.mini != nil
	s, err := redissaver.New(context.Background(), tr.client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keysUnder returns every key of the server that starts with prefix.
func (tr tier) keysUnder(t testing.TB, prefix string) []string {
	t.Helper()
	ks, err := tr.client(t).Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// dataKeys returns the keys under prefix that hold data: all of them but the
// prefix's own (its meta key, its shard registries holding only their
// marker, its shard feeds) and the threads' event streams, which carry a
// Redis TTL of their own when the saver has one and outlive a deletion by
// design (docs/storage-format.md).
func (tr tier) dataKeys(t testing.TB, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	rdb := tr.client(t)
	var out []string
	for _, k := range tr.keysUnder(t, prefix) {
		switch {
		case k == prefix+":meta", strings.HasSuffix(k, "}:feed"), strings.HasSuffix(k, ":events"):
		case strings.HasSuffix(k, "}:threads"):
			if m, err := rdb.ZRange(ctx, k, 0, -1).Result(); err != nil || len(m) != 1 || m[0] != "" {
				out = append(out, k)
			}
		default:
			out = append(out, k)
		}
	}
	return out
}

// prefix returns a key prefix unique to this call.
func prefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "einotest:" + hex.EncodeToString(b[:])
}

// shared is the redis-server the real tier starts, once per test binary.
var shared sharedServer

type sharedServer struct {
	once sync.Once
	srv  *redisproc.Server
	err  error
}

func (s *sharedServer) stop() {
	if s.srv != nil {
		s.srv.Stop()
	}
}

// realURL returns the URL of a real Redis: REDIS_URL, else a redis-server
// started from PATH on a free loopback port (shared by the tests of the
// binary, stopped by TestMain). Without redis-server the test is skipped,
// or failed when CI is set.
func realURL(t testing.TB) string {
	t.Helper()
	if url := os.Getenv("REDIS_URL"); url != "" {
		return url
	}
	bin := redisproc.Require(t)
	shared.once.Do(func() { shared.srv, shared.err = redisproc.Start(bin) })
	if shared.err != nil {
		t.Fatalf("starting redis-server: %v", shared.err)
	}
	return "redis://" + shared.srv.Addr
}
