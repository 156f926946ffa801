package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// keyPrefix starts every key prefix handed out by Prefix, so that keys left
// behind by tests on a shared server are easy to recognise.
const keyPrefix = "rctest:"

// Mini starts an in-process miniredis for the test and returns it together
// with a client connected to it. Both are closed when the test ends.
func Mini(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	mr := miniredis.RunT(t) // closes itself on t.Cleanup
	client := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaintNotificationsConfig: NoMaintNotifications()})
	t.Cleanup(func() { _ = client.Close() })
	return mr, client
}

// shared is the redis-server started by Real, once per test binary.
var shared struct {
	once sync.Once
	mu   sync.Mutex
	srv  *redisserver.Server
	err  error
}

// Real returns a new client to a real Redis, closed when the test ends.
//
// With REDIS_URL set, the client connects to that server. Otherwise it
// connects to a redis-server that the helper starts on a free loopback port
// the first time Real is called in the test binary, and that all tests of
// the binary share (call [Main] from TestMain to stop it). Without
// redis-server on PATH the test is skipped, or failed when CI is set.
//
// The server is shared: tests must use keys under [Prefix] and must not
// flush the database.
func Real(t testing.TB) *redis.Client {
	t.Helper()
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("redistest: bad REDIS_URL: %v", err)
		}
		opt.MaintNotificationsConfig = NoMaintNotifications()
		client := redis.NewClient(opt)
		t.Cleanup(func() { _ = client.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := client.Ping(ctx).Err(); err != nil {
			t.Fatalf("redistest: REDIS_URL server does not answer PING: %v", err)
		}
		return client
	}

	bin := requireRedisServer(t, "REDIS_URL is unset (set it to use a running Redis instead)")
	shared.once.Do(func() {
		srv, err := redisserver.Start(bin, nil)
		shared.mu.Lock()
		shared.srv, shared.err = srv, err
		shared.mu.Unlock()
	})
	shared.mu.Lock()
	srv, err := shared.srv, shared.err
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("redistest: starting the shared redis-server: %v", err)
	}
	if srv == nil {
		t.Fatal("redistest: the shared redis-server was already stopped (Real called after Main's m.Run returned?)")
	}
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaintNotificationsConfig: NoMaintNotifications()})
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// Main runs the tests and then stops the shared redis-server started by
// [Real], if any, removes its temporary directory and exits with the tests'
// exit code. Packages that use Real should call it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	shared.mu.Lock()
	srv := shared.srv
	shared.srv = nil
	shared.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
	os.Exit(code)
}

// StartServer starts a dedicated redis-server for this test on a free
// loopback port and returns its address ("127.0.0.1:PORT"). extraArgs are
// appended to the helper's own arguments (--port N --bind 127.0.0.1
// --save "" --appendonly no --dir TEMPDIR --daemonize no), so they can
// override any of them, e.g. "--maxmemory", "10mb" or "--aclfile", path.
// The server is stopped and its directory removed when the test ends.
//
// The helper decides that the server is up when its log (stdout) says it is
// ready to accept connections and its plain TCP port answers PING with any
// reply (an authentication error counts), so extraArgs must keep the plain
// --port open, and must not redirect --logfile or raise --loglevel above
// notice.
//
// Without redis-server on PATH the test is skipped, or failed when CI is
// set. REDIS_URL plays no part here: the server is always a local one.
func StartServer(t testing.TB, extraArgs ...string) (addr string) {
	t.Helper()
	bin := requireRedisServer(t, "StartServer always runs its own local server")
	srv, err := redisserver.Start(bin, extraArgs)
	if err != nil {
		t.Fatalf("redistest: starting redis-server %q: %v", extraArgs, err)
	}
	t.Cleanup(srv.Stop)
	return srv.Addr()
}

// Prefix returns a key prefix unique to this call: "rctest:" followed by 12
// random hex digits, such as "rctest:3f9a0c1be27d". Add your own separator
// if you want one. It contains no '{' or '}', so it never forces keys into
// one Redis Cluster hash slot by accident.
func Prefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("redistest: random prefix: %v", err)
	}
	return keyPrefix + hex.EncodeToString(b[:])
}

// NoMaintNotifications turns maintenance notifications (a Redis 8.2
// feature) off for a test's client: in their default auto mode, go-redis
// logs a line on every connection to a server without them (Redis 7,
// miniredis), and tests have no use for them.
func NoMaintNotifications() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// LoseKey deletes key, as an eviction would, and returns a func that puts it
// back as it was (DUMP, then DEL of whatever was written there meanwhile and
// RESTORE: real Redis only, miniredis has neither DUMP nor RESTORE).
func LoseKey(t testing.TB, rdb redis.UniversalClient, key string) (restore func()) {
	t.Helper()
	ctx := context.Background()
	dump, err := rdb.Dump(ctx, key).Result()
	if err != nil {
		t.Fatalf("DUMP %s: %v", key, err)
	}
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatalf("DEL %s: %v", key, err)
	}
	return func() {
		t.Helper()
		if err := rdb.Del(ctx, key).Err(); err != nil {
			t.Fatalf("DEL %s: %v", key, err)
		}
		if err := rdb.Restore(ctx, key, 0, dump).Err(); err != nil {
			t.Fatalf("RESTORE %s: %v", key, err)
		}
	}
}

// JudgeLoss judges what calls answered after key was lost (out and errs, by
// call name) against what they answered before it (before): each call
// answers the same with a nil error or fails with checkpoint.ErrDataLoss,
// and at least one notices the loss.
func JudgeLoss(t testing.TB, key string, before, out map[string]string, errs map[string]error) {
	t.Helper()
	noticed := false
	for name, err := range errs {
		switch {
		case err != nil && !errors.Is(err, checkpoint.ErrDataLoss):
			t.Errorf("%s: %v, want nil or ErrDataLoss", name, err)
		case err != nil:
			noticed = true
		case out[name] != before[name]:
			t.Errorf("%s changed with a nil error:\n got %s\nwant %s", name, out[name], before[name])
		}
	}
	if !noticed {
		t.Errorf("no call noticed the loss of %s", key)
	}
}
