package redissaver_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// TestSoak runs agent traffic against a dedicated redis-server for the
// duration in REDCHECK_SOAK (make soak: 10m; not in CI) and checks that
// Redis memory and the process's goroutines stay flat: 16 workers each run
// threads of 40 super-steps (Put, 2 PutWrites, GetTuple, a List page, a
// Prune keep_latest every 10 steps), then delete the thread and start
// another. Samples are logged every 30 s (every tenth of the run when
// shorter).
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("REDCHECK_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("set REDCHECK_SOAK to a duration (make soak runs 10m)")
	}
	addr := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32})
	t.Cleanup(func() { rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{Events: redissaver.Events{MaxLen: 200, FeedMaxLen: 2000, RetainDeleted: 5 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()

	var ops, threads atomic.Int64
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				soakThread(ctx, t, s, fmt.Sprintf("soak-%d-%d", w, n), &ops)
				threads.Add(1)
			}
		}()
	}

	type sample struct {
		at         time.Duration
		mem        int64
		goroutines int
		heap       uint64
	}
	var samples []sample
	every := min(30*time.Second, d/10)
	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			if ctx.Err() != nil {
				done = true
				continue
			}
			runtime.GC() // the live heap, not what the collector has yet to free
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			smp := sample{time.Since(start).Round(time.Second), usedMemory(t, rdb), runtime.NumGoroutine(), ms.HeapAlloc}
			samples = append(samples, smp)
			t.Logf("%6v  redis used_memory %7.1f MiB  goroutines %3d  heap %6.1f MiB  ops %d  threads %d",
				smp.at, float64(smp.mem)/(1<<20), smp.goroutines, float64(smp.heap)/(1<<20), ops.Load(), threads.Load())
		}
	}
	wg.Wait()
	if len(samples) < 6 {
		t.Fatalf("only %d samples", len(samples))
	}
	// Flat: after a warm-up of a third of the run, the last third's
	// averages are within 20% of the middle third's.
	third := len(samples) / 3
	avg := func(ss []sample, f func(sample) float64) float64 {
		var sum float64
		for _, s := range ss {
			sum += f(s)
		}
		return sum / float64(len(ss))
	}
	mid, last := samples[third:2*third], samples[2*third:]
	for _, m := range []struct {
		name string
		f    func(sample) float64
	}{
		{"redis memory", func(s sample) float64 { return float64(s.mem) }},
		{"goroutines", func(s sample) float64 { return float64(s.goroutines) }},
		{"heap", func(s sample) float64 { return float64(s.heap) }},
	} {
		a, b := avg(mid, m.f), avg(last, m.f)
		t.Logf("%s: middle third %.0f, last third %.0f (%+.1f%%)", m.name, a, b, 100*(b-a)/a)
		if b > 1.2*a {
			t.Errorf("%s grew: middle third %.0f, last third %.0f", m.name, a, b)
		}
	}
	if vs, err := violations(context.Background(), s, ""); err != nil || len(vs) != 0 {
		t.Errorf("check after the soak: %v %v", vs, err)
	}
	t.Logf("%d operations on %d threads in %v", ops.Load(), threads.Load(), d)
}

// soakThread runs one thread of the soak and deletes it.
func soakThread(ctx context.Context, t *testing.T, s *redissaver.Saver, thread string, ops *atomic.Int64) {
	cfg := checkpoint.Config{ThreadID: thread}
	msgs := []any{}
	version := ""
	for step := range 40 {
		if ctx.Err() != nil {
			break
		}
		version = s.NextVersion(version)
		msgs = append(msgs, map[string]any{"role": "ai", "content": strings.Repeat("x", 200)})
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
			ChannelValues:   map[string]any{"messages": msgs, "step": step},
			ChannelVersions: map[string]string{"messages": version, "step": version}}
		next, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step, "source": "loop"}, cp.ChannelVersions)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("put: %v", err)
			}
			return
		}
		cfg = next
		for task := range 2 {
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "messages", Value: "w"}, {Channel: "step", Value: step}}, strconv.Itoa(task), ""); err != nil && ctx.Err() == nil {
				t.Errorf("put writes: %v", err)
			}
		}
		if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: thread}); err != nil && ctx.Err() == nil {
			t.Errorf("get tuple: %v", err)
		}
		for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: thread, Limit: 5}) {
			if err != nil && ctx.Err() == nil {
				t.Errorf("list: %v", err)
			}
		}
		if step%10 == 9 {
			if err := s.Prune(ctx, []string{thread}, checkpoint.PruneKeepLatest); err != nil && ctx.Err() == nil {
				t.Errorf("prune: %v", err)
			}
		}
		ops.Add(6)
	}
	if err := s.DeleteThread(context.Background(), thread); err != nil {
		t.Errorf("delete: %v", err)
	}
}

func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}
