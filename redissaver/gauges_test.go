package redissaver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// gauge returns the value of an int64 gauge's one point, and the point's
// redcheck.prefix; ok is false when the gauge has no point.
func gauge(t *testing.T, rm metricdata.ResourceMetrics, name string) (v int64, prefix string, ok bool) {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			g, isGauge := m.Data.(metricdata.Gauge[int64])
			if !isGauge {
				t.Fatalf("%s: %T, want an int64 gauge", name, m.Data)
			}
			if len(g.DataPoints) != 1 {
				t.Fatalf("%s: %d points, want 1", name, len(g.DataPoints))
			}
			p, _ := g.DataPoints[0].Attributes.Value("redcheck.prefix")
			return g.DataPoints[0].Value, p.AsString(), true
		}
	}
	return 0, "", false
}

// TestGauges: redcheck.reclaim.backlog counts a deleted thread's
// generation left queued (a DeleteThread cut off after its first step)
// until Sweep reclaims it, redcheck.threads.expired the threads whose
// lease ran out until Sweep retires them; both go once unregistered.
func TestGauges(t *testing.T) { forTiers(t, gauges) }

// TestGaugesCluster: the same on a Redis Cluster, where one collection's
// pipeline goes to every master (REDCHECK_CLUSTER=1).
func TestGaugesCluster(t *testing.T) {
	redistest.RequireCluster(t)
	gauges(t, redistest.StartCluster(t, 3, 0).Client(t))
}

func gauges(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	cut := &cutter{}
	rdb.(interface{ AddHook(redis.Hook) }).AddHook(cut)
	r := newTelRig(t, rdb, redissaver.Options{Shards: 2})
	prefix := keys.Of(r.s).Prefix()
	reg, err := r.s.RegisterGauges()
	if err != nil {
		t.Fatal(err)
	}
	want := func(when string, backlog, expired int64) {
		t.Helper()
		rm := r.metrics(t)
		for name, w := range map[string]int64{"redcheck.reclaim.backlog": backlog, "redcheck.threads.expired": expired} {
			v, p, ok := gauge(t, rm, name)
			switch {
			case !ok:
				t.Errorf("%s: no %s", when, name)
			case v != w || p != prefix:
				t.Errorf("%s: %s = %d {redcheck.prefix=%q}, want %d {%q}", when, name, v, p, w, prefix)
			}
		}
	}
	want("empty", 0, 0)

	// A deletion cut off after its first step: the thread is gone, its
	// generation queued.
	scaleChain(t, r.s, "big", 150)
	if err := r.s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	cut.left.Store(1)
	cut.armed.Store(true)
	err = r.s.DeleteThread(ctx, "big")
	cut.armed.Store(false)
	if !errors.Is(err, errCut) {
		t.Fatalf("DeleteThread cut off: %v", err)
	}
	want("after DeleteThread cut off", 1, 0)
	if _, err := r.s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	want("after Sweep", 0, 0)

	// Threads whose lease ran out (a saver of the same prefix with a TTL).
	leased, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, Shards: 2, AcceptEviction: true, TTL: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []string{"e1", "e2", "e3"} {
		putOne(t, leased, checkpoint.Config{ThreadID: th}, 0)
	}
	time.Sleep(60 * time.Millisecond)
	want("leases ran out", 0, 3)
	if _, err := r.s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	want("after the second Sweep", 0, 0)

	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	rm := r.metrics(t)
	for _, name := range []string{"redcheck.reclaim.backlog", "redcheck.threads.expired"} {
		if v, _, ok := gauge(t, rm, name); ok {
			t.Errorf("unregistered: %s = %d", name, v)
		}
	}
}

// TestGaugesRedisDown: a collection that cannot reach Redis reports no
// point and returns the error.
func TestGaugesRedisDown(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	r := newTelRig(t, rdb, redissaver.Options{Shards: 2})
	reg, err := r.s.RegisterGauges()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reg.Unregister() }()
	mr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(ctx, &rm); err == nil {
		t.Error("Collect with Redis down: no error")
	}
	if v, _, ok := gauge(t, rm, "redcheck.reclaim.backlog"); ok {
		t.Errorf("Redis down: backlog %d reported", v)
	}
}
