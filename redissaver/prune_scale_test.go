package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// wideLimit is the brief's bound on one script's block, which a prune of a
// wide thread keeps to.
const wideLimit = 20 * time.Millisecond

// TestBoundedWidePrune: one thread of wide checkpoints (12 channels, one of
// them a delta channel whose seed is the root's, so that Prune keeps the
// whole chain; one other channel changed per step; 3 pending writes each),
// 5,000 of them, or REDCHECK_WIDE (issue 36 measured 100,000), pruned with
// PruneKeepLatest while a redis-cli PINGs: the worst PING and SLOWLOG entry
// stay within blockLimit, and the thread reads back the same.
func TestBoundedWidePrune(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 5,000 wide checkpoints")
	}
	n := scale(t, "REDCHECK_WIDE", 5000)
	rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t), PoolSize: 16})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{})
	ctx := context.Background()
	start := time.Now()
	chans := make([]string, 11)
	for i := range chans {
		chans[i] = fmt.Sprint("ch", i)
	}
	// Every checkpoint's versions are known up front, so 8 writers put them
	// in any order (reads resolve versions, whatever the order).
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				// "log" is a delta channel: a new version at every step without a
				// value (its writes are the step's pending writes), the seed at the
				// root.
				logv := fmt.Sprintf("%08d", i+1)
				cp := checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("%08d", i), ChannelValues: map[string]any{},
					ChannelVersions: map[string]string{"log": logv}}
				nv := map[string]string{"log": logv}
				for j, ch := range chans {
					at := i - (i+len(chans)-j)%len(chans) // the last step <= i that wrote ch
					if at < 0 {
						at = 0
					}
					cp.ChannelVersions[ch] = fmt.Sprintf("%08d", at+1)
					if at == i {
						cp.ChannelValues[ch] = fmt.Sprintf("%s@%d %s", ch, i, strings.Repeat("v", 300))
						nv[ch] = cp.ChannelVersions[ch]
					}
				}
				cfg := checkpoint.Config{ThreadID: "wide"}
				if i == 0 {
					cp.ChannelValues["log"] = checkpoint.DeltaSnapshot{Value: []any{"seed"}}
					for _, ch := range chans {
						cp.ChannelValues[ch], nv[ch] = fmt.Sprintf("%s@0", ch), cp.ChannelVersions[ch]
					}
				} else {
					cfg.CheckpointID = fmt.Sprintf("%08d", i-1)
				}
				stored, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, nv)
				if err == nil {
					for w := range 3 {
						if err = s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "log", Value: fmt.Sprint(i, "/", w)}}, fmt.Sprint("task-", w), ""); err != nil {
							break
						}
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	before, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "wide"})
	must(t, err)
	t.Logf("built %d wide checkpoints in %v", n, time.Since(start))
	m := redistest.NewBlockMeter(t, rdb, redistest.BlockMeterOptions{RedisCLI: true, SlowerThan: 5 * time.Millisecond})
	began := time.Now()
	must(t, s.Prune(ctx, []string{"wide"}, checkpoint.PruneKeepLatest))
	ping, slow, what := m.Read(t)
	t.Logf("prune keep_latest of %d wide checkpoints: %v; worst PING %v; worst SLOWLOG entry %v %s", n, time.Since(began), ping, slow, what)
	if ping > wideLimit || slow > wideLimit {
		t.Errorf("prune blocked Redis: worst PING %v, worst SLOWLOG entry %v (%s); limit %v", ping, slow, what, wideLimit)
	}
	after, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "wide"})
	must(t, err)
	if fmt.Sprint(after.Checkpoint, after.PendingWrites) != fmt.Sprint(before.Checkpoint, before.PendingWrites) {
		t.Errorf("the latest checkpoint changed with the prune")
	}
	h, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: "wide"}, []string{"log"})
	must(t, err)
	if got := h["log"]; !got.HasSeed || len(got.Writes) != 3*(n-1) {
		t.Errorf("delta history after the prune: seed %v, %d writes, want %d", got.HasSeed, len(got.Writes), 3*(n-1))
	}
}
