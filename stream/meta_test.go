package stream_test

import (
	"context"
	"errors"
	"github.com/graphstate/redcheck/internal/keys"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// TestShardMismatch: a subscriber whose shard count differs from the one
// the prefix was written with gets an error wrapping
// checkpoint.ErrInvalidConfig from Subscribe (thread or every thread) and
// from Consume, instead of silently reading feeds no saver writes; the
// right shard count receives the events.
func TestShardMismatch(t *testing.T) { forTiers(t, shardMismatch) }

func shardMismatch(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{Shards: 4})
	ids := putN(t, s, "m", 2)
	for _, tc := range []struct {
		shards int
		want   error
	}{
		{16, checkpoint.ErrInvalidConfig},
		{0, checkpoint.ErrInvalidConfig}, // the default, 16
		{1, checkpoint.ErrInvalidConfig},
		{4, nil},
	} {
		sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: tc.shards, Block: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, thread := range []string{"m", ""} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			var got []string
			var errs []error
			for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: thread, From: stream.FromBeginning}) {
				if err != nil {
					errs = append(errs, err)
					if len(errs) > 3 {
						break
					}
					continue
				}
				got = append(got, ev.CheckpointID)
				if len(got) == len(ids) {
					break
				}
			}
			cancel()
			if tc.want != nil {
				if len(errs) != 1 || !errors.Is(errs[0], tc.want) || !strings.HasPrefix(errs[0].Error(), "stream: ") ||
					!strings.Contains(errs[0].Error(), "4 shards") || len(got) != 0 {
					t.Errorf("shards %d, thread %q: errors %v, events %v; want one error wrapping %v", tc.shards, thread, errs, got, tc.want)
				}
			} else if len(errs) != 0 || strings.Join(got, ",") != strings.Join(ids, ",") {
				t.Errorf("shards %d, thread %q: errors %v, events %v; want %v", tc.shards, thread, errs, got, ids)
			}
		}

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		handled := make(chan string, len(ids))
		err = sub.Consume(ctx, "g", "c", func(ctx context.Context, ev stream.Event) error {
			handled <- ev.CheckpointID
			if len(handled) == len(ids) {
				cancel()
			}
			return nil
		}, stream.ConsumeOptions{Start: stream.FromBeginning})
		cancel()
		if tc.want != nil {
			if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), "stream: ") || len(handled) != 0 {
				t.Errorf("Consume with shards %d: %v after %d events; want an error wrapping %v", tc.shards, err, len(handled), tc.want)
			}
		} else if !errors.Is(err, context.Canceled) || len(handled) != len(ids) {
			t.Errorf("Consume with shards %d: %v after %d events; want %d events", tc.shards, err, len(handled), len(ids))
		}
	}
}

// TestNoMetaYet: a prefix nothing was written to has no meta key: a
// subscription started before the first write is accepted and receives
// what a saver with its shard count writes next.
func TestNoMetaYet(t *testing.T) { forTiers(t, noMetaYet) }

func noMetaYet(t *testing.T, rdb redis.UniversalClient) {
	prefix := redistest.Prefix(t)
	sub, err := stream.New(rdb, stream.Options{Prefix: prefix, Shards: 2, Block: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	found := nowFound(t, rdb)
	got, cancel := collect(t, sub, stream.Query{ThreadID: "x"}, 1)
	defer cancel()
	found(1)
	s := newSaver(t, rdb, redissaver.Options{Prefix: prefix, Shards: 2})
	ids := putN(t, s, "x", 1)
	if evs := checkpointIDs(<-got); len(evs) != 1 || evs[0] != ids[0] {
		t.Errorf("events %v, want %v", evs, ids)
	}
}
