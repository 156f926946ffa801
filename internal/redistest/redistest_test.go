package redistest_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestMini(t *testing.T) {
	mr, client := redistest.Mini(t)
	ctx := context.Background()
	if err := client.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := mr.Get("k"); err != nil || got != "v" {
		t.Fatalf("miniredis Get = %q, %v; want \"v\"", got, err)
	}
}

func TestRealPing(t *testing.T) {
	client := redistest.Real(t)
	ctx := context.Background()
	if got, err := client.Ping(ctx).Result(); err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	key := redistest.Prefix(t) + ":k"
	t.Cleanup(func() { redistest.Real(t).Del(context.Background(), key) })
	if err := client.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// A second client reaches the same shared server.
	if got, err := redistest.Real(t).Get(ctx, key).Result(); err != nil || got != "v" {
		t.Fatalf("GET from a second client = %q, %v; want \"v\"", got, err)
	}
}

func TestRealSharesOneServer(t *testing.T) {
	a, b := redistest.Real(t), redistest.Real(t)
	if a == b {
		t.Fatal("Real returned the same client twice; want a new client per call")
	}
	if a.Options().Addr != b.Options().Addr {
		t.Fatalf("Real addresses differ: %s vs %s; want one shared server", a.Options().Addr, b.Options().Addr)
	}
	if strings.HasSuffix(a.Options().Addr, ":6379") && !envSet("REDIS_URL") {
		t.Fatalf("Real used the default port 6379 without REDIS_URL")
	}
}

func TestStartServerExtraArgs(t *testing.T) {
	addr := redistest.StartServer(t, "--maxmemory", "10mb")
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = client.Close() })
	got, err := client.ConfigGet(context.Background(), "maxmemory").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["maxmemory"] != "10485760" {
		t.Fatalf("CONFIG GET maxmemory = %v; want 10485760", got)
	}
}

func TestStartServerIsDedicated(t *testing.T) {
	a := redistest.StartServer(t)
	b := redistest.StartServer(t)
	if a == b {
		t.Fatalf("two StartServer calls returned the same address %s", a)
	}
	if !envSet("REDIS_URL") {
		if shared := redistest.Real(t).Options().Addr; shared == a || shared == b {
			t.Fatalf("StartServer returned the shared server's address %s", shared)
		}
	}
}

func TestStartServerStopsOnCleanup(t *testing.T) {
	var addr string
	t.Run("inner", func(t *testing.T) { addr = redistest.StartServer(t) })
	if addr == "" {
		t.Skip("inner test skipped")
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = conn.Close()
		t.Fatalf("server on %s still accepts connections after its test ended", addr)
	}
}

func TestPrefix(t *testing.T) {
	a, b := redistest.Prefix(t), redistest.Prefix(t)
	if a == b {
		t.Fatalf("Prefix returned %q twice", a)
	}
	for _, p := range []string{a, b} {
		if !strings.HasPrefix(p, "rctest:") || strings.ContainsAny(p, "{}") {
			t.Fatalf("Prefix = %q; want rctest:<hex> without braces", p)
		}
	}
}

// checkCounter runs the Counter checks against a client.
func checkCounter(t *testing.T, client redis.UniversalClient, prefix string) {
	t.Helper()
	ctx := context.Background()
	ctr := redistest.CountRoundTrips(client)

	// A brand-new client dials during this command; the connection setup
	// (HELLO, CLIENT SETINFO) must not be counted.
	if err := client.Set(ctx, prefix+"a", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n := ctr.Load(); n != 1 {
		t.Fatalf("single command on a new connection: round trips = %d, want 1 (commands %v)", n, ctr.Commands())
	}
	if got := ctr.Commands(); !slices.Equal(got, []string{"set"}) {
		t.Fatalf("Commands = %v, want [set]", got)
	}
	if ctr.Dials() < 1 {
		t.Fatalf("Dials = %d, want >= 1 for a new client", ctr.Dials())
	}

	ctr.Reset()
	if n, cmds := ctr.Load(), ctr.Commands(); n != 0 || len(cmds) != 0 {
		t.Fatalf("after Reset: Load = %d, Commands = %v", n, cmds)
	}
	if err := client.Get(ctx, prefix+"a").Err(); err != nil {
		t.Fatal(err)
	}
	if n := ctr.Load(); n != 1 {
		t.Fatalf("single command: round trips = %d, want 1", n)
	}

	ctr.Reset()
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, prefix+"b", "2", 0)
		p.Incr(ctx, prefix+"c")
		p.Get(ctx, prefix+"a")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := ctr.Load(); n != 1 {
		t.Fatalf("3-command pipeline: round trips = %d, want 1", n)
	}
	if got := ctr.Commands(); !slices.Equal(got, []string{"set", "incr", "get"}) {
		t.Fatalf("Commands = %v, want [set incr get]", got)
	}

	ctr.Reset()
	_, err = client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, prefix+"c")
		p.Incr(ctx, prefix+"c")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := ctr.Load(); n != 1 {
		t.Fatalf("MULTI/EXEC transaction: round trips = %d, want 1 (commands %v)", n, ctr.Commands())
	}

	// Concurrent use: every command is counted exactly once.
	ctr.Reset()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if err := client.Incr(ctx, prefix+"n").Err(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := ctr.Load(); n != 80 {
		t.Fatalf("80 concurrent commands: round trips = %d, want 80", n)
	}
	if got := len(ctr.Commands()); got != 80 {
		t.Fatalf("80 concurrent commands: %d command names, want 80", got)
	}
}

func TestCounterMini(t *testing.T) {
	_, client := redistest.Mini(t)
	checkCounter(t, client, redistest.Prefix(t)+":")
}

func TestCounterReal(t *testing.T) {
	// A client that has not connected yet (Real pings a REDIS_URL server).
	client := redis.NewClient(redistest.Real(t).Options())
	t.Cleanup(func() { _ = client.Close() })
	prefix := redistest.Prefix(t) + ":"
	t.Cleanup(func() {
		redistest.Real(t).Del(context.Background(), prefix+"a", prefix+"b", prefix+"c", prefix+"n")
	})
	checkCounter(t, client, prefix)
}
