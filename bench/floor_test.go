package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestValueLenFitsExactly(t *testing.T) {
	for _, total := range []int{100, 1021, 13953, 27968, 99_999, 100_008, 1 << 20} {
		key := "rcbench-ab12cd34-floor-Put-1:set"
		v := setValueLen(key, total)
		wire := len("*3\r\n") + bulkLen(3) + bulkLen(len(key)) + bulkLen(v)
		if wire != total {
			t.Errorf("SET of %d B: value %d gives %d B on the wire", total, v, wire)
		}
		if g := getValueLen(total); bulkLen(g) != total {
			t.Errorf("GET reply of %d B: value %d gives %d B", total, g, bulkLen(g))
		}
	}
	// Sizes a bulk string cannot have (the length's digits jump) get the
	// nearest below; sizes below an empty value get 0.
	if g := getValueLen(16); bulkLen(g) != 15 {
		t.Errorf("getValueLen(16) = %d", g)
	}
	if v := setValueLen("k", 3); v != 0 {
		t.Errorf("setValueLen below the command's own size = %d, want 0", v)
	}
}

func TestParseScriptArgs(t *testing.T) {
	buf := []byte("payload")
	sa, ok := parseScriptArgs([]any{"evalsha", "abc", 2, "k1", "k2", buf, int64(7), "x"})
	buf[0] = 'P' // the caller reuses its buffer: the copy must not change
	if !ok || strings.Join(sa.keys, ",") != "k1,k2" || len(sa.args) != 3 || sa.args[0] != "payload" || sa.args[1] != int64(7) {
		t.Errorf("parsed %+v, %v", sa, ok)
	}
	for _, bad := range [][]any{{"evalsha", "abc"}, {"evalsha", "abc", 3, "k1"}, {"evalsha", "abc", "x"}} {
		if _, ok := parseScriptArgs(bad); ok {
			t.Errorf("parseScriptArgs(%v) accepted", bad)
		}
	}
}

func TestServerTime(t *testing.T) {
	before := map[string]redisserver.CommandStat{"evalsha": {Calls: 10, Usecs: 100}, "get": {Calls: 5, Usecs: 5}}
	after := map[string]redisserver.CommandStat{"evalsha": {Calls: 20, Usecs: 350}, "get": {Calls: 50, Usecs: 90}, "set": {Calls: 1, Usecs: 4}}
	// get ran inside the scripts: not sent by the client, not counted.
	if got := serverTime(before, after, map[string]struct{}{"evalsha": {}, "set": {}}, nil); got != 254 {
		t.Errorf("serverTime = %v, want 250 + 4", got)
	}
	// A transaction: EXEC's time holds the commands it ran. 4 of the 10
	// EVALSHA calls were inside one: 6/10 of evalsha's time is charged.
	before["exec"], after["exec"] = redisserver.CommandStat{}, redisserver.CommandStat{Calls: 4, Usecs: 120}
	names := map[string]struct{}{"evalsha": {}, "exec": {}}
	if got := serverTime(before, after, names, map[string]int64{"evalsha": 4, "hset": 4}); got != 150+120 {
		t.Errorf("serverTime with a transaction = %v, want 150 + 120", got)
	}
	// Every call inside a transaction: EXEC alone.
	if got := serverTime(before, after, map[string]struct{}{"exec": {}}, map[string]int64{"evalsha": 10}); got != 120 {
		t.Errorf("serverTime of transactions only = %v, want 120", got)
	}
}

// TestFloorMovesTheSameBytes runs an operation (a script call with keys and
// arguments, then a pipeline of two), calibrates it and measures its three
// floors, on both tiers: SET sends exactly the bytes the operation sent,
// GET receives exactly what it received, and the no-op script gets its
// keys and arguments in the same round trips. On the real tier, every
// pass also reads its server time.
func TestFloorMovesTheSameBytes(t *testing.T) {
	for _, tier := range []string{"miniredis", "redis-server"} {
		t.Run(tier, func(t *testing.T) {
			var base *redis.Client
			if tier == "miniredis" {
				_, base = redistest.Mini(t)
			} else {
				base = redistest.Real(t)
			}
			ctx := context.Background()
			opt := redis.Options{Addr: base.Options().Addr}
			h := &harness{cfg: config{budget: 5 * time.Second}, runID: "t" + strconv.FormatInt(time.Now().UnixNano(), 36),
				meter: &meter{}, lmeter: &meter{}, ctl: base}
			h.client = newClient(opt, 4, h.meter)
			h.lclient = newClient(opt, 4, h.lmeter)
			defer func() { _ = h.client.Close(); _ = h.lclient.Close() }()
			script := redis.NewScript("return ARGV[1]") // replies with its first argument
			key := h.prefix("op")
			op := &pass{impl: implOurs, op: "Op", conc: 1, maxOps: 20, warmup: 2, budget: 5 * time.Second, meter: h.meter,
				do: func(ctx context.Context, _, i int) error {
					if err := script.Run(ctx, h.client, []string{key}, strings.Repeat("a", 100+i%3), i).Err(); err != nil {
						return err
					}
					_, err := h.client.Pipelined(ctx, func(p redis.Pipeliner) error {
						script.EvalSha(ctx, p, []string{key, key + "2"}, "b", "cc")
						script.EvalSha(ctx, p, []string{key}, "d")
						return nil
					})
					return err
				}}
			if tier == "redis-server" {
				op.stats = h.ctl
			}
			op.warm(ctx)
			cal, err := calibrate(ctx, op, 6, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if cal.Ops != 6 || cal.ScriptTrips != 2 || cal.ScriptCalls != 3 || len(cal.rep[0].calls[0].keys) != 1 || !cal.rep[1].pipelined {
				t.Fatalf("calibration %+v, trips %+v", cal, cal.rep)
			}
			floors := h.floorPasses(ctx, op, &cal)
			if len(floors) != 3 {
				t.Fatalf("%d floor passes, want SET, GET and EVALSHA", len(floors))
			}
			rows := map[string]Row{}
			for _, p := range append([]*pass{op}, floors...) {
				p.stats = op.stats
				r, err := measure(ctx, *p)
				if err != nil {
					t.Fatal(err)
				}
				rows[r.Op] = r
				if r.ServerUS.Valid() != (tier == "redis-server") || r.ServerCPUus.Valid() != r.ServerUS.Valid() || r.ServerUS < 0 || r.ServerCPUus < 0 {
					t.Errorf("%s: server time %v, CPU %v on %s", r.Op, r.ServerUS, r.ServerCPUus, tier)
				}
			}
			set, get, ev := rows[floorSet+"Op"], rows[floorGet+"Op"], rows[floorEvalSha+"Op"]
			if int(set.Sent) != int(cal.Sent+0.5) || int(get.Recv) != int(cal.Recv+0.5) {
				t.Errorf("SET sent %v B and GET received %v B; the operation %v / %v", set.Sent, get.Recv, cal.Sent, cal.Recv)
			}
			if ev.RoundTrips != 2 || abs(float64(ev.Sent)-cal.Sent) > 2 {
				t.Errorf("no-op script: %v round trips, %v B sent; want 2 and about %v", ev.RoundTrips, ev.Sent, cal.Sent)
			}
		})
	}
}
