package redisstore_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/storetest"
	"github.com/redis/go-redis/v9"
)

// The whole kit on a Redis Cluster of two masters, each serving half the
// slots, through a ClusterClient. A script that touched a key outside the
// slot of its KEYS[1] would fail there half the time ("non local key"), so
// this checks that every key of an operation carries the store's hash tag.
func TestKitCluster(t *testing.T) {
	ctx := context.Background()
	addrs := []string{
		redistest.StartServer(t, "--cluster-enabled", "yes"),
		redistest.StartServer(t, "--cluster-enabled", "yes"),
	}
	var nodes []*redis.Client
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		t.Cleanup(func() { _ = c.Close() })
		nodes = append(nodes, c)
	}
	if err := nodes[0].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 8191).Err(); err != nil {
		t.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
	}
	if err := nodes[1].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 8192, 16383).Err(); err != nil {
		t.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
	}
	host, port, err := net.SplitHostPort(addrs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := nodes[0].ClusterMeet(ctx, host, port).Err(); err != nil {
		t.Fatalf("CLUSTER MEET: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range nodes {
		for {
			info, err := n.ClusterInfo(ctx).Result()
			if err == nil && containsLine(info, "cluster_state:ok") && containsLine(info, "cluster_known_nodes:2") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster not ready: %q %v", info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() }); err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, storetest.Env{
		New:     func(t *testing.T, o redisstore.Options) *redisstore.Store { return newStore(t, rdb, o) },
		Advance: func(t *testing.T, d time.Duration) { time.Sleep(d) },
		Unit:    250 * time.Millisecond,
	})
}

func containsLine(s, line string) bool {
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		l := s[:i]
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
		if l == line {
			return true
		}
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return false
}
