package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/redis/go-redis/v9"
)

// Cluster tests. A real Redis Cluster takes a few seconds to form and a few
// more to fail over, so tests that need one are opt-in: they call
// [RequireCluster] first, which skips them unless the environment variable
// REDCHECK_CLUSTER is non-empty. `make test-cluster` runs them:
//
//	REDCHECK_CLUSTER=1 go test -race -count=1 -run Cluster ./...
//
// Name such tests with "Cluster" in them so that -run Cluster selects them.

const (
	// clusterNodeTimeout is the cluster-node-timeout of StartCluster's
	// nodes, in milliseconds: how long a master must be unreachable before
	// its replica starts an election. A failover takes about twice this.
	clusterNodeTimeout = 2000
	// clusterFormTimeout bounds the wait for a new cluster to be healthy.
	clusterFormTimeout = 60 * time.Second
	// clusterEnv opts in to the cluster tests.
	clusterEnv = "REDCHECK_CLUSTER"
)

// RequireCluster skips the test unless REDCHECK_CLUSTER is set (to any
// non-empty value). Call it first in every test that starts a cluster.
func RequireCluster(t testing.TB) {
	t.Helper()
	if os.Getenv(clusterEnv) == "" {
		t.Skip("redistest: cluster test; set " + clusterEnv + "=1 (or run make test-cluster) to run it")
	}
}

// Cluster is a local Redis Cluster started by [StartCluster]. Its methods
// are safe for concurrent use.
type Cluster struct {
	mu     sync.Mutex
	nodes  []*redisserver.Server
	killed map[string]bool
}

// StartCluster starts a Redis Cluster of masters masters with
// replicasPerMaster replicas each, for this test, and waits until it is
// healthy: CLUSTER INFO reports cluster_state:ok with every slot assigned
// and every node known on every node, and every replica's link to its
// master is up. masters must be at least 3 (redis-cli refuses fewer).
//
// Each node is a redis-server started as [StartServer] starts one (free
// loopback port, --save "", --appendonly no, its own temporary directory)
// with --cluster-enabled yes, --cluster-config-file nodes.conf and a
// cluster-node-timeout of 2 s; the nodes are joined with
// `redis-cli --cluster create ... --cluster-replicas N --cluster-yes`.
// Every node is stopped and its directory removed when the test ends.
//
// Without redis-server or redis-cli on PATH the test is skipped, or failed
// when CI is set. StartCluster does not check REDCHECK_CLUSTER: call
// [RequireCluster] for that.
func StartCluster(t testing.TB, masters, replicasPerMaster int) *Cluster {
	t.Helper()
	bin := requireRedisServer(t, "StartCluster always runs its own local servers")
	cli := requireBinary(t, "redis-cli", "StartCluster joins its nodes with redis-cli --cluster create")
	if masters < 3 || replicasPerMaster < 0 {
		t.Fatalf("redistest: StartCluster(%d, %d): need at least 3 masters and no negative replica count", masters, replicasPerMaster)
	}
	c := &Cluster{killed: map[string]bool{}}
	t.Cleanup(c.stop)

	n := masters * (1 + replicasPerMaster)
	args := []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.Itoa(clusterNodeTimeout),
		"--repl-diskless-sync-delay", "0",
	}
	nodes := make([]*redisserver.Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = redisserver.Start(bin, args)
		}()
	}
	wg.Wait()
	for _, srv := range nodes {
		if srv != nil {
			c.nodes = append(c.nodes, srv)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("redistest: starting cluster nodes: %v", err)
	}

	create := append([]string{"--cluster", "create"}, c.Addrs()...)
	create = append(create, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterFormTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, create...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli %s: %v\n%s", strings.Join(create, " "), err, out)
	}
	if err := c.waitHealthy(ctx, masters, masters*replicasPerMaster); err != nil {
		t.Fatalf("redistest: cluster of %d nodes not healthy after %v: %v\nredis-cli output:\n%s", n, clusterFormTimeout, err, out)
	}
	return c
}

// Addrs returns the address of every node, "127.0.0.1:PORT", killed ones
// included, in the order redis-cli was given them (with --cluster-replicas
// N, redis-cli makes the first nodes the masters).
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		out[i] = s.Addr()
	}
	return out
}

// Client returns a new cluster client seeded with every node's address,
// closed when the test ends. Tests that want other options (timeouts,
// retries, ReadOnly) build their own from Addrs.
//
// The client reloads the slot map every second (a goroutine calls
// ReloadState until the test ends; newer go-redis versions have
// ClusterOptions.ClusterStateReloadInterval for this, which the go-redis
// floor, v9.16.0, lacks). go-redis reloads it at once on a MOVED reply, but
// a master that died answers nothing: a connection refused does not trigger
// a reload, so without the ticker the client would keep sending the dead
// master's slots to it for up to a minute after its replica took over.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaintNotificationsConfig: NoMaintNotifications()})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				client.ReloadState(context.Background())
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		_ = client.Close()
	})
	return client
}

// Kill sends SIGKILL to the node at addr, as a crash would, and waits until
// its process is gone. The node stays down; its replica, if it was a
// master, is promoted after about twice the node timeout (2 s). Killing a
// killed node is harmless; an address not of this cluster is an error.
func (c *Cluster) Kill(addr string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.nodes {
		if s.Addr() == addr {
			s.Kill()
			c.killed[addr] = true
			return nil
		}
	}
	return fmt.Errorf("redistest: %s is not a node of this cluster", addr)
}

// stop ends every node and removes its directory.
func (c *Cluster) stop() {
	c.mu.Lock()
	nodes := c.nodes
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Stop()
		}()
	}
	wg.Wait()
}

// waitHealthy polls every node until the cluster is formed: each node sees
// cluster_state:ok, all 16384 slots served, and every node in its role
// (masters masters, replicas replicas), and each replica reports its master
// link up.
func (c *Cluster) waitHealthy(ctx context.Context, masters, replicas int) error {
	addrs := c.Addrs()
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, MaintNotificationsConfig: NoMaintNotifications()})
		defer clients[i].Close()
	}
	var last error
	for {
		last = clusterHealth(ctx, clients, masters, replicas)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// clusterHealth returns nil when the cluster is formed, or what is not yet.
func clusterHealth(ctx context.Context, clients []*redis.Client, masters, replicas int) error {
	n := masters + replicas
	linked := 0
	for _, cl := range clients {
		nodes, err := cl.ClusterNodes(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER NODES: %w", cl.Options().Addr, err)
		}
		if m, r := countRoles(nodes); m != masters || r != replicas {
			return fmt.Errorf("%s sees %d masters and %d replicas", cl.Options().Addr, m, r)
		}
		info, err := cl.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER INFO: %w", cl.Options().Addr, err)
		}
		fields := infoFields(info)
		for k, want := range map[string]string{
			"cluster_state":       "ok",
			"cluster_slots_ok":    "16384",
			"cluster_known_nodes": strconv.Itoa(n),
		} {
			if fields[k] != want {
				return fmt.Errorf("%s: CLUSTER INFO %s:%s, want %s", cl.Options().Addr, k, fields[k], want)
			}
		}
		repl, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			return fmt.Errorf("%s: INFO replication: %w", cl.Options().Addr, err)
		}
		rf := infoFields(repl)
		if rf["role"] == "slave" {
			if rf["master_link_status"] != "up" || rf["master_sync_in_progress"] != "0" {
				return fmt.Errorf("%s: replica link %s, sync in progress %s", cl.Options().Addr, rf["master_link_status"], rf["master_sync_in_progress"])
			}
			linked++
		}
	}
	if linked != replicas {
		return fmt.Errorf("%d replicas linked to their master, want %d", linked, replicas)
	}
	return nil
}

// countRoles counts the masters and the replicas in a CLUSTER NODES reply
// (lines of: id addr flags master-id ...; flags such as "myself,master").
func countRoles(nodes string) (masters, replicas int) {
	for _, line := range strings.Split(nodes, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 {
			continue
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
	return masters, replicas
}

// infoFields parses the key:value lines of an INFO or CLUSTER INFO reply.
func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			out[k] = v
		}
	}
	return out
}
