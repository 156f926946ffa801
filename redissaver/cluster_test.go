package redissaver_test

// Redis Cluster tests. TestScriptKeysShareOneSlot needs no cluster and runs
// in every `go test`. The others start a real local cluster (redis-server
// --cluster-enabled yes, joined with redis-cli --cluster create; see
// redistest.StartCluster) and run only with REDCHECK_CLUSTER=1, which
// `make test-cluster` sets:
//
//	REDCHECK_CLUSTER=1 go test -race -count=1 -run Cluster ./...

import (
	"context"
	"crypto/sha1"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// crc16 is the CRC-16/XMODEM checksum Redis Cluster hashes keys with
// (polynomial 0x1021, initial value 0).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// keySlot is Redis Cluster's HASH_SLOT: the CRC16 of the key's hash tag
// (the part between the first '{' and the next '}', when non-empty) or of
// the whole key, modulo 16384.
func keySlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	return int(crc16(key) % 16384)
}

func TestKeySlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31C3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
	// Values from CLUSTER KEYSLOT on a real Redis.
	for key, want := range map[string]int{
		"foo": 12182, "bar": 5061, "123456789": 12739, "{user1000}.following": 3443, "{user1000}.followers": 3443,
		"foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "{bar": 4015, "": 0,
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

// slotChecker is a go-redis hook that checks, for every script the saver
// runs, that all its KEYS and every key base it passes in ARGV (scripts
// build keys from those) hash to one slot.
type slotChecker struct {
	keyLike func(arg string) bool // an ARGV value that is a key or key base
	calls   atomic.Int64
	mu      sync.Mutex
	bad     []string
	seen    map[string]bool // SHA1 of each script run
}

func (h *slotChecker) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *slotChecker) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.inspect(cmd)
		return next(ctx, cmd)
	}
}

func (h *slotChecker) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.inspect(c)
		}
		if len(cmds) > 0 && cmds[0].Name() == "multi" {
			h.inspectTx(cmds)
		}
		return next(ctx, cmds)
	}
}

// inspectTx checks that every key-like argument of a transaction's commands
// (scripts' included) hashes to one slot: a Cluster runs a transaction on
// one node.
func (h *slotChecker) inspectTx(cmds []redis.Cmder) {
	first := ""
	for _, c := range cmds {
		for _, a := range c.Args()[1:] {
			k, ok := a.(string)
			if !ok || !h.keyLike(k) {
				continue
			}
			if first == "" {
				first = k
			} else if keySlot(k) != keySlot(first) {
				h.fail(fmt.Sprintf("transaction: %q (slot %d) and %q (slot %d)", first, keySlot(first), k, keySlot(k)))
			}
		}
	}
}

func (h *slotChecker) inspect(cmd redis.Cmder) {
	name := cmd.Name()
	if name != "evalsha" && name != "eval" && name != "evalsha_ro" && name != "eval_ro" {
		return
	}
	args := cmd.Args()
	nkeys, _ := args[2].(int)
	sha := fmt.Sprint(args[1])
	if strings.HasPrefix(name, "eval") && !strings.HasPrefix(name, "evalsha") {
		sha = fmt.Sprintf("%x", sha1.Sum([]byte(sha)))
	}
	h.mu.Lock()
	if h.seen == nil {
		h.seen = map[string]bool{}
	}
	h.seen[sha] = true
	h.mu.Unlock()
	var names []string
	for i, a := range args[3:] {
		s, ok := a.(string)
		if i < nkeys || (ok && h.keyLike(s)) {
			names = append(names, fmt.Sprint(a))
		}
	}
	h.calls.Add(1)
	if nkeys == 0 {
		h.fail(fmt.Sprintf("script call without keys: %v", args))
		return
	}
	for _, k := range names[1:] {
		if keySlot(k) != keySlot(names[0]) {
			h.fail(fmt.Sprintf("%s: %q (slot %d) and %q (slot %d)", name, names[0], keySlot(names[0]), k, keySlot(k)))
		}
	}
}

func (h *slotChecker) fail(msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.bad) < 20 {
		h.bad = append(h.bad, msg)
	}
}

// report fails the test for each cross-slot call seen, and when no script
// call was seen at all although some were expected.
func (h *slotChecker) report(t *testing.T, expectCalls bool) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.bad {
		t.Error("cross-slot script call: " + b)
	}
	if expectCalls && h.calls.Load() == 0 {
		t.Error("no script call seen")
	}
}

// TestSlotCheckerFlagsCrossSlot: the checker does see a cross-slot call,
// in KEYS or in a key base passed in ARGV.
func TestSlotCheckerFlagsCrossSlot(t *testing.T) {
	ctx := context.Background()
	h := &slotChecker{keyLike: func(a string) bool { return strings.HasPrefix(a, "p:{") }}
	h.inspect(redis.NewCmd(ctx, "evalsha", "x", 2, "p:{1}:a", "p:{1}:b", "p:{1}:base", "data"))
	if len(h.bad) != 0 {
		t.Fatalf("one slot flagged: %v", h.bad)
	}
	h.inspect(redis.NewCmd(ctx, "evalsha", "x", 2, "p:{1}:a", "p:{2}:b"))
	h.inspect(redis.NewCmd(ctx, "eval", "return 1", 1, "p:{1}:a", "p:{3}:base"))
	if len(h.bad) != 2 {
		t.Fatalf("cross-slot calls flagged: %v, want 2", h.bad)
	}
}

// hostileThreads are thread ids of every awkward kind plus random ones.
func hostileThreads(rng *rand.Rand, n int) []string {
	out := []string{"*", "{x}", "a}b{c", "{", "}", "{}", "a:b|c", "\x00", "%7B", strings.Repeat("{", 100), "日本語"}
	for len(out) < n {
		b := make([]byte, 1+rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		out = append(out, string(b))
	}
	return out
}

// exerciseEveryScript runs every operation of the saver, so that every
// script runs, on the given threads.
func exerciseEveryScript(t *testing.T, s *redissaver.Saver, threads []string) {
	defer func() {
		if _, err := s.Sweep(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, th := range threads {
		for _, ns := range []string{"", "{sub}"} {
			cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
			var first checkpoint.Config
			for step := range 2 {
				v := fmt.Sprint(step + 1)
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"c": step}, ChannelVersions: map[string]string{"c": v, "d": "1"}}
				var err error
				cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"run_id": fmt.Sprint("run{", i%3, "}")}, map[string]string{"c": v, "d": "1"})
				must(err)
				must(s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "d", Value: step}}, "task{1}", ""))
				if step == 0 {
					first = cfg
				}
			}
			_, err := s.GetTuple(ctx, first) // predicted by nothing: get_tuple.lua reads it
			must(err)
			_, err = s.GetTuple(ctx, cfg) // predicted: plain reads confirm it
			must(err)
			_, err = s.GetTuple(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns})
			must(err)
			_, err = s.DeltaChannelHistory(ctx, cfg, []string{"d"})
			must(err)
			if i == 0 {
				// A page whose values hold over 32 KiB: read by a plain HMGET.
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"big": docValue},
					ChannelVersions: map[string]string{"big": "1", "c": "2", "d": "1"}}
				_, err = s.Put(ctx, cfg, cp, nil, map[string]string{"big": "1"})
				must(err)
			}
			for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th, CheckpointNS: checkpoint.NS(ns)}) {
				must(err)
			}
		}
		for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th, Filter: checkpoint.Metadata{"run_id": "run{0}"}}) {
			must(err)
		}
		must(s.CopyThread(ctx, th, th+"/copy"))
	}
	for _, err := range s.List(ctx, checkpoint.ListQuery{Limit: 50}) {
		must(err)
	}
	for _, err := range s.List(ctx, checkpoint.ListQuery{CheckpointNS: checkpoint.NS("{sub}")}) {
		must(err)
	}
	requireSound(t, s, "")
	requireSound(t, s, threads[0])
	must(s.Prune(ctx, threads[:len(threads)/2], checkpoint.PruneKeepLatest))
	must(s.DeleteForRuns(ctx, []string{"run{1}"}))
	must(s.Prune(ctx, threads[len(threads)/2:], checkpoint.PruneDelete))
	for _, th := range threads {
		must(s.DeleteThread(ctx, th+"/copy"))
	}
	requireSound(t, s, "")
}

// TestScriptKeysShareOneSlot: for many random and hostile thread ids, every
// script call of every operation passes keys (and key bases) of one slot,
// so no CROSSSLOT error is possible on a Cluster. On a plain Redis; the
// cluster tests repeat it against a real cluster, which enforces it too.
func TestScriptKeysShareOneSlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shards := range []int{1, 7, 16, 64} {
		t.Run(fmt.Sprint(shards, "_shards"), func(t *testing.T) {
			rdb := redistest.Real(t) // a client of its own, for the hook
			s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true, Shards: shards})
			base := keys.Of(s).Prefix() + ":{"
			h := &slotChecker{keyLike: func(a string) bool { return strings.HasPrefix(a, base) }}
			rdb.AddHook(h)
			exerciseEveryScript(t, s, hostileThreads(rng, 40))
			h.report(t, true)
			h.mu.Lock()
			for _, f := range saverScripts() {
				if f == "rekey.lua" {
					// Run by redcheck rekey, not the saver: TestClusterRekeyCommand
					// runs it on a real cluster, which refuses a cross-slot call.
					continue
				}
				if !h.seen[scriptrun.All()[f].Hash()] {
					t.Errorf("%s never ran: the test does not cover its keys", f)
				}
			}
			h.mu.Unlock()
			t.Logf("%d script calls of the %d scripts, each within one slot", h.calls.Load(), len(saverScripts()))
		})
	}
}

// clusterSuites run against one shared 3+3 cluster in TestClusterConformance,
// each as a subtest named after it, through a cluster client with the slot
// checker installed. The event stream tests of issue 4 belong here too: add
// {"streams", func(t, rdb) { ... }} running them through rdb.
var clusterSuites = []struct {
	name string
	run  func(t *testing.T, rdb *redis.ClusterClient)
}{
	{"kit_16_shards", func(t *testing.T, rdb *redis.ClusterClient) {
		checkpointtest.Run(t, checkedSaver(rdb, redissaver.Options{AcceptEviction: true}))
	}},
	{"kit_64_shards", func(t *testing.T, rdb *redis.ClusterClient) {
		checkpointtest.Run(t, checkedSaver(rdb, redissaver.Options{AcceptEviction: true, Shards: 64}))
	}},
	{"every_script_hostile_threads", func(t *testing.T, rdb *redis.ClusterClient) {
		s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true, Shards: 64})
		exerciseEveryScript(t, s, hostileThreads(rand.New(rand.NewPCG(3, 4)), 30))
		requireSound(t, s, "")
	}},
	{"slots_spread", func(t *testing.T, rdb *redis.ClusterClient) {
		// The shards of a default saver land on every master, and the
		// test's slot function agrees with the cluster's.
		s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
		ctx := context.Background()
		masters := map[string]bool{}
		for n := range keys.Of(s).Shards() {
			key := keys.Of(s).All(n)
			got, err := rdb.ClusterKeySlot(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if int(got) != keySlot(key) {
				t.Errorf("CLUSTER KEYSLOT %q = %d, keySlot = %d", key, got, keySlot(key))
			}
			m, err := rdb.MasterForKey(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			masters[m.Options().Addr] = true
		}
		for _, k := range []string{"{bar", "foo{}{bar}", "a}b{c"} {
			if got := rdb.ClusterKeySlot(ctx, k).Val(); int(got) != keySlot(k) {
				t.Errorf("CLUSTER KEYSLOT %q = %d, keySlot = %d", k, got, keySlot(k))
			}
		}
		if len(masters) != 3 {
			t.Errorf("16 shards on %d masters, want 3", len(masters))
		}
	}},
	{"acl_user", func(t *testing.T, rdb *redis.ClusterClient) {
		// The ACL of acl_test.go, set on every node, is enough on a
		// cluster too (plus the cluster client's topology commands).
		prefix := redistest.Prefix(t)
		ctx := context.Background()
		if err := rdb.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
			return node.Do(ctx, aclSetUser("clusteruser", "pw", prefix, true)...).Err()
		}); err != nil {
			t.Fatal(err)
		}
		user := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rdb.Options().Addrs, Username: "clusteruser", Password: "pw"})
		t.Cleanup(func() { _ = user.Close() })
		groups := 0
		checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
			groups++
			s, err := redissaver.New(context.Background(), user, redissaver.Options{AcceptEviction: true, Prefix: fmt.Sprint(prefix, ":", groups)})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	}},
}

func TestClusterConformance(t *testing.T) {
	redistest.RequireCluster(t)
	c := redistest.StartCluster(t, 3, 1)
	for _, suite := range clusterSuites {
		t.Run(suite.name, func(t *testing.T) {
			rdb := c.Client(t)
			// Every prefix of these tests starts "rctest:" (redistest.Prefix).
			h := &slotChecker{keyLike: func(a string) bool { return strings.HasPrefix(a, "rctest:") && strings.Contains(a, ":{") }}
			rdb.AddHook(h)
			suite.run(t, rdb)
			h.report(t, false)
		})
	}
}

// TestClusterFailover kills the master of several threads' slots in the
// middle of a write loop (Put + PutWrites on 8 threads). The saver returns
// clear errors while the slots move, then goes on writing on the promoted
// replica; afterwards every acknowledged write reads back and the check
// finds no violation, so no checkpoint is half-written.
func TestClusterFailover(t *testing.T) {
	redistest.RequireCluster(t)
	c := redistest.StartCluster(t, 3, 1)
	rdb := c.Client(t)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
	ctx := context.Background()
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}

	// Eight threads, at least two of them on the victim master.
	first, err := rdb.MasterForKey(ctx, keys.Of(s).ThreadBase("failover-0"))
	if err != nil {
		t.Fatal(err)
	}
	victim := first.Options().Addr
	var threads, onVictim []string
	for i := 0; len(threads) < 8 || len(onVictim) < 2; i++ {
		th := fmt.Sprint("failover-", i)
		m, err := rdb.MasterForKey(ctx, keys.Of(s).ThreadBase(th))
		if err != nil {
			t.Fatal(err)
		}
		if m.Options().Addr == victim {
			onVictim = append(onVictim, th)
		} else if len(threads) >= 8-2 {
			continue
		}
		threads = append(threads, th)
	}

	led := newAckLedger()
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writeLoop(wctx, s, th, led, 50*time.Millisecond)
		}()
	}
	time.Sleep(time.Second)
	before, _, _ := led.counts()
	// Redis Cluster replicates asynchronously: a write acknowledged in the
	// last moment before its master dies may never reach the replica (the
	// Redis documentation says so). The victim first holds new writes for a
	// moment, so that what it acknowledged has reached its replica and this
	// test checks the saver (no half-written checkpoint, clear errors, a
	// recovery) rather than Redis's replication lag.
	vc := redis.NewClient(&redis.Options{Addr: victim})
	if err := vc.Do(ctx, "CLIENT", "PAUSE", 1000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	_ = vc.Close()
	time.Sleep(200 * time.Millisecond)
	killed := time.Now()
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}

	// Wait (up to 30 s) until every thread of the victim's slots has a Put
	// sent after the kill acknowledged, then let the loop run a little
	// longer.
	var pause time.Duration
	for deadline := killed.Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			stop()
			wg.Wait()
			t.Fatalf("threads %v not written for 30 s after killing %s; errors:%s", onVictim, victim, led.errorSummary())
		}
		if !slices.ContainsFunc(onVictim, func(th string) bool { return !led.ackedSince(th, killed) }) {
			pause = time.Since(killed)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	puts, writes, errs := led.counts()
	if errs == 0 {
		t.Errorf("no error while the slots moved: was the master killed?")
	}
	gotPuts, gotWrites := led.verify(t, s)
	t.Logf("killed master %s after %d acknowledged puts; writes to its slots resumed after %v; %d errors meanwhile:%s",
		victim, before, pause.Round(time.Millisecond), errs, led.errorSummary())
	t.Logf("%d acknowledged Puts and %d acknowledged PutWrites (of %d and %d) read back after the failover, 0 violations",
		gotPuts, gotWrites, puts, writes)
}
