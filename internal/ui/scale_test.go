package ui

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
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

// scaleEnv turns on the wall-clock assertion of TestThreadsFirstPageScale
// (timed assertions do not belong in the default tests).
const scaleEnv = "REDCHECK_SCALE"

// counter is a go-redis hook that counts the commands sent, pipelined ones
// included, and the script calls among them.
type counter struct{ cmds, scripts atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}
func (c *counter) count(cmd redis.Cmder) {
	c.cmds.Add(1)
	if n := strings.ToLower(cmd.Name()); strings.HasPrefix(n, "eval") || n == "fcall" {
		c.scripts.Add(1)
	}
}

// fill puts n threads of one checkpoint each under prefix, concurrently.
func fill(t *testing.T, rdb *redis.Client, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	// Without events: a Put is then a few keys, and the listing does not
	// read events.
	s, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4, Events: redissaver.Events{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 48
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now().UTC().Format(time.RFC3339Nano),
					ChannelValues: map[string]any{"i": i}, ChannelVersions: map[string]string{"i": "1"}}
				md := checkpoint.Metadata{"source": "input", "step": -1, "run_id": fmt.Sprintf("run-%d", i%10)}
				if _, err := s.Put(ctx, checkpoint.Config{ThreadID: fmt.Sprintf("t%06d", i)}, cp, md, map[string]string{"i": "1"}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// firstPage serves a UI over prefix with a counting client, and returns
// the commands, script calls and time of GET /api/threads (first page), once
// the connection is open.
func firstPage(t *testing.T, rdb *redis.Client, prefix string) (cmds, scripts int64, took time.Duration, page threadPage) {
	t.Helper()
	var out threadPage
	cmds, scripts, took = measure(t, rdb, prefix, "/api/threads?limit=50", &out)
	return cmds, scripts, took, out
}

// measure serves a UI over prefix with a counting client, and returns the
// commands, script calls and time of GET path, once the connection is open.
func measure(t *testing.T, rdb *redis.Client, prefix, path string, out any) (cmds, scripts int64, took time.Duration) {
	t.Helper()
	opt := *rdb.Options()
	client := redis.NewClient(&opt)
	t.Cleanup(func() { client.Close() })
	c := &counter{}
	client.AddHook(c)
	srv, err := New(client, Options{Prefix: prefix, Shards: 4, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	f := &fixture{ts: ts}
	var st statusJSON
	f.getJSON(t, "/api/status", &st) // opens the saver
	if !st.OK {
		t.Fatalf("status %+v", st)
	}
	c.cmds.Store(0)
	c.scripts.Store(0)
	start := time.Now()
	f.getJSON(t, path, out)
	return c.cmds.Load(), c.scripts.Load(), time.Since(start)
}

// TestThreadsFirstPageScale: the first page of a prefix with 100,000
// threads costs what it costs with 1,000 (the listing reads a page per
// shard, never every thread).
func TestThreadsFirstPageScale(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a real Redis with 100,000 threads")
	}
	if raceEnabled { // its instrumented client takes minutes to fill the prefix
		t.Skip("skipped under the race detector: make test runs it without (SCALE_TESTS)")
	}
	rdb := redistest.Real(t)
	rdb.Options().PoolSize = 64
	small, large := redistest.Prefix(t), redistest.Prefix(t)
	start := time.Now()
	fill(t, rdb, small, 1_000)
	fill(t, rdb, large, 100_000)
	t.Logf("filled 101,000 threads in %v", time.Since(start).Round(time.Millisecond))

	sc, ss, st, sp := firstPage(t, rdb, small)
	lc, ls, lt, lp := firstPage(t, rdb, large)
	t.Logf("first page of 1,000 threads: %d commands, %d script calls, %v", sc, ss, st)
	t.Logf("first page of 100,000 threads: %d commands, %d script calls, %v", lc, ls, lt)
	if len(sp.Threads) != 50 || len(lp.Threads) != 50 || lp.NextBefore == "" {
		t.Fatalf("pages of %d and %d threads", len(sp.Threads), len(lp.Threads))
	}
	if lc > sc || ls > ss {
		t.Errorf("the first page of 100,000 threads takes %d commands (%d scripts), of 1,000 %d (%d): not bounded", lc, ls, sc, ss)
	}
	// A round of the shards' indexes, then the page's checkpoints (a
	// saver page, redissaver.DefaultPageSize, of them at most).
	if max := int64(2*4 + 2*redissaver.DefaultPageSize); lc > max {
		t.Errorf("the first page takes %d commands, want at most %d", lc, max)
	}
	if os.Getenv(scaleEnv) != "" && lt > time.Second {
		t.Errorf("the first page of 100,000 threads took %v, want < 1s", lt)
	}
}

// TestTimelineFirstPageScale: the newest page of a thread with 10,000
// checkpoints costs what it costs with 100.
func TestTimelineFirstPageScale(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a thread of 10,000 checkpoints")
	}
	rdb := redistest.Real(t)
	prefix := redistest.Prefix(t)
	ctx := context.Background()
	s, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4, Events: redissaver.Events{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	lengths := map[string]int{"short": 100, "long": 10_000}
	for th, n := range lengths {
		cfg := checkpoint.Config{ThreadID: th}
		for i := range n {
			v := fmt.Sprint(i + 1)
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now().UTC().Format(time.RFC3339Nano),
				ChannelValues: map[string]any{"i": i}, ChannelVersions: map[string]string{"i": v}}
			if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"source": "loop", "step": i}, map[string]string{"i": v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var short, long checkpointPage
	sc, _, st := measure(t, rdb, prefix, "/api/threads/short/checkpoints?limit=50", &short)
	lc, _, lt := measure(t, rdb, prefix, "/api/threads/long/checkpoints?limit=50", &long)
	t.Logf("newest page of 100 checkpoints: %d commands, %v; of 10,000: %d commands, %v", sc, st, lc, lt)
	if len(long.Checkpoints) != 50 || long.NextBefore == "" || *long.Checkpoints[0].Step != 9_999 {
		t.Fatalf("long page: %d checkpoints, next %q", len(long.Checkpoints), long.NextBefore)
	}
	if lc > sc {
		t.Errorf("the newest page of 10,000 checkpoints takes %d commands, of 100 %d: not bounded", lc, sc)
	}
	var deep checkpointPage
	dc, _, _ := measure(t, rdb, prefix, "/api/threads/long/checkpoints?limit=50&before="+long.NextBefore, &deep)
	if dc > sc || len(deep.Checkpoints) != 50 || *deep.Checkpoints[0].Step != 9_949 {
		t.Errorf("the next page: %d commands, %d checkpoints", dc, len(deep.Checkpoints))
	}
	if os.Getenv(scaleEnv) != "" && lt > time.Second {
		t.Errorf("the newest page of 10,000 checkpoints took %v, want < 1s", lt)
	}
}
