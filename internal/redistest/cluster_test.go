package redistest_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestClusterStartAndFailover(t *testing.T) {
	redistest.RequireCluster(t)
	c := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	if n := len(c.Addrs()); n != 6 {
		t.Fatalf("Addrs: %d nodes, want 6", n)
	}
	client := c.Client(t)
	prefix := redistest.Prefix(t)
	// Keys spread over every master.
	for i := range 100 {
		if err := client.Set(ctx, fmt.Sprint(prefix, ":", i), i, 0).Err(); err != nil {
			t.Fatalf("SET on the cluster: %v", err)
		}
	}
	masters, replicas := 0, 0
	nodes := client.ClusterNodes(ctx).Val()
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		fields := strings.Fields(line) // id addr flags master ...
		if len(fields) < 3 {
			t.Fatalf("CLUSTER NODES line %q", line)
		}
		for _, flag := range strings.Split(fields[2], ",") {
			switch flag {
			case "master":
				masters++
			case "slave":
				replicas++
			}
		}
	}
	if masters != 3 || replicas != 3 {
		t.Fatalf("CLUSTER NODES: %d masters, %d replicas; want 3 and 3:\n%s", masters, replicas, nodes)
	}

	// Kill the master of one key: the key comes back from its promoted
	// replica (nothing was written meanwhile, so replication caught up).
	key := prefix + ":7"
	m, err := client.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	victim := m.Options().Addr
	// Replication is asynchronous: wait until the victim's replica has
	// everything the victim acknowledged, or the key could be lost with it.
	waitReplicated(t, m)
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", victim, time.Second); err == nil {
		_ = conn.Close()
		t.Fatalf("killed node %s still accepts connections", victim)
	}
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	for {
		got, err := client.Get(ctx, key).Result()
		if err == nil {
			if got != "7" {
				t.Fatalf("after failover GET = %q, want 7", got)
			}
			break
		}
		if time.Now().After(deadline) {
			for _, a := range c.Addrs() {
				if a != victim {
					node := redis.NewClient(&redis.Options{Addr: a})
					t.Logf("CLUSTER NODES from %s:\n%s", a, node.ClusterNodes(ctx).Val())
					_ = node.Close()
					break
				}
			}
			t.Fatalf("no failover after 30 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("failover of %s served again after %v", victim, time.Since(start).Round(time.Millisecond))
	if err := c.Kill("127.0.0.1:1"); err == nil {
		t.Error("Kill of an unknown address: no error")
	}
	if err := c.Kill(victim); err != nil {
		t.Errorf("second Kill: %v", err)
	}
}

func TestClusterStopsOnCleanup(t *testing.T) {
	redistest.RequireCluster(t)
	var addrs []string
	t.Run("inner", func(t *testing.T) { addrs = redistest.StartCluster(t, 3, 0).Addrs() })
	if len(addrs) != 3 {
		t.Fatalf("inner cluster: %v", addrs)
	}
	for _, a := range addrs {
		if conn, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = conn.Close()
			t.Errorf("node %s still accepts connections after its test ended", a)
		}
	}
}

func TestRestartableServer(t *testing.T) {
	r := redistest.StartRestartableServer(t)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	for k, want := range map[string]string{"appendonly": "yes", "appendfsync": "always"} {
		if got := client.ConfigGet(ctx, k).Val()[k]; got != want {
			t.Fatalf("CONFIG GET %s = %q, want %q", k, got, want)
		}
	}
	if err := r.Restart(); err == nil {
		t.Fatal("Restart of a running server: no error")
	}
	for i := range 3 {
		if err := client.Set(ctx, "k", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		r.Kill()
		r.Kill() // harmless
		if err := client.Ping(ctx).Err(); err == nil {
			t.Fatal("a killed server answers PING")
		}
		if err := r.Restart(); err != nil {
			t.Fatal(err)
		}
		// Acknowledged before the kill, so on disk with appendfsync always.
		if got, err := client.Get(ctx, "k").Result(); err != nil || got != fmt.Sprint(i) {
			t.Fatalf("after restart %d: GET k = %q, %v; want %d", i+1, got, err, i)
		}
	}
	if r.Restarts() != 3 {
		t.Errorf("Restarts = %d, want 3", r.Restarts())
	}
}

func TestRestartableServerStopsOnCleanup(t *testing.T) {
	var addr string
	t.Run("inner", func(t *testing.T) {
		r := redistest.StartRestartableServer(t)
		r.Kill()
		if err := r.Restart(); err != nil {
			t.Fatal(err)
		}
		addr = r.Addr()
	})
	if addr == "" {
		t.Skip("inner test skipped")
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = conn.Close()
		t.Fatalf("server on %s still accepts connections after its test ended", addr)
	}
}

// waitReplicated waits (up to 10 s) until every replica of master m has
// acknowledged its replication offset (INFO replication).
func waitReplicated(t *testing.T, m *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, err := m.Info(ctx, "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		var master int64 = -1
		caught, replicas := 0, 0
		for _, line := range strings.Split(info, "\n") {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
				fmt.Sscan(v, &master)
			}
		}
		for _, line := range strings.Split(info, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "slave") || !strings.Contains(line, "offset=") {
				continue
			}
			replicas++
			for _, kv := range strings.Split(line, ",") {
				if v, ok := strings.CutPrefix(kv, "offset="); ok {
					var off int64
					fmt.Sscan(v, &off)
					if off >= master {
						caught++
					}
				}
			}
		}
		if replicas > 0 && caught == replicas {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas of %s did not catch up in 10 s:\n%s", m.Options().Addr, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
