package stream_test

import (
	"context"
	"github.com/graphstate/redcheck/internal/keys"
	"slices"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
)

// BenchmarkPutToSubscriber measures, on a real Redis, the time from the
// start of a Put to the moment a subscriber blocked on the thread (and one
// on every thread) yields its event: p50 and p99 in microseconds.
func BenchmarkPutToSubscriber(b *testing.B) {
	for _, thread := range []string{"latency", ""} {
		name := "thread"
		if thread == "" {
			name = "all-threads"
		}
		b.Run(name, func(b *testing.B) {
			rdb := redistest.Real(b)
			s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: redistest.Prefix(b)})
			if err != nil {
				b.Fatal(err)
			}
			sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Block: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			arrived := make(chan string, 1)
			started := make(chan struct{})
			go func() {
				close(started)
				for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: thread}) {
					if err == nil && ev.Type == stream.TypeCheckpoint {
						arrived <- ev.CheckpointID
					}
				}
			}()
			<-started
			time.Sleep(50 * time.Millisecond) // the subscription has found "now" and blocks
			cfg := checkpoint.Config{ThreadID: "latency"}
			var lat []time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if cfg, err = s.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, checkpoint.Metadata{"step": 1}, nil); err != nil {
					b.Fatal(err)
				}
				if id := <-arrived; id != cfg.CheckpointID {
					b.Fatalf("got event of %s, want %s", id, cfg.CheckpointID)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
