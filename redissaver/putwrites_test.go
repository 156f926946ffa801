package redissaver_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// rootCheckpoint puts an empty root checkpoint of thread on a new saver of
// rdb, for writes to go against.
func rootCheckpoint(t *testing.T, rdb redis.UniversalClient, thread string) (context.Context, redis.UniversalClient, *redissaver.Saver, checkpoint.Config) {
	t.Helper()
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{})
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: thread}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, rdb, s, cfg
}

// TestPutWritesManyInOneCall stores 700 and 2,500 writes in one PutWrites,
// to channels whose names take 1, 2 and 3 decimal digits to state their
// length: put_writes.lua asks whether the first 998 fields exist in the
// same HMGET as the checkpoint's head fields and the rest in chunks, sizes
// its tables once for a call of up to 998 writes (700: more than one HSET
// chunk of pairs from a table sized for all of them), and takes each
// channel's len ":" name for the event from the write's value. The first
// 50 writes are stored by a call of their own before the call of them all,
// whose event must name every other channel in order; the same writes sent
// again by a new call must store nothing (the fields past the first HMGET
// included) and announce nothing.
func TestPutWritesManyInOneCall(t *testing.T) {
	for _, b := range backends {
		for _, count := range []int{700, 2500} {
			t.Run(fmt.Sprintf("%s/%d", b.name, count), func(t *testing.T) {
				testPutWritesMany(t, b.client(t), count)
			})
		}
	}
}

func testPutWritesMany(t *testing.T, client redis.UniversalClient, count int) {
	ctx, rdb, s, cfg := rootCheckpoint(t, client, "many")
	lengths := []int{1, 9, 10, 99, 100, 150}
	writes := func(tag string) []checkpoint.Write {
		w := make([]checkpoint.Write, count)
		for i := range w {
			w[i] = checkpoint.Write{Channel: strings.Repeat(string(rune('a'+i%26)), lengths[i%len(lengths)]), Value: fmt.Sprintf("%s-%d", tag, i)}
		}
		return w
	}
	// The first 50 go first, on their own: the call of them all then stores
	// the others only, fewer pairs than its tables were sized for.
	first := writes("first")
	const early = 50
	l := keys.Of(s)
	cpKey := l.Checkpoint("many", rdb.HGet(ctx, l.Head("many"), "g").Val(), "", cfg.CheckpointID)
	fields := rdb.HLen(ctx, cpKey).Val()
	for _, w := range [][]checkpoint.Write{first[:early], first} {
		if err := s.PutWrites(ctx, cfg, w, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	events := l.Events("many")
	msgs, err := rdb.XRevRangeN(ctx, events, "+", "-", 1).Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("last event: %v, %v", msgs, err)
	}
	names := make([]string, 0, len(first)-early)
	for _, w := range first[early:] {
		names = append(names, w.Channel)
	}
	if got, want := msgs[0].Values["ch"], codec.JoinNames(names); got != want {
		t.Errorf("event ch of %d bytes, want %d: %.80q", len(fmt.Sprint(got)), len(want), got)
	}
	n := rdb.XLen(ctx, events).Val()

	if err := s.PutWrites(ctx, cfg, writes("second"), "task", ""); err != nil {
		t.Fatal(err)
	}
	if m := rdb.XLen(ctx, events).Val(); m != n {
		t.Errorf("events after writes stored again: %d, want %d (nothing stored, nothing announced)", m, n)
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Its writes and the call token "ow", no other field.
	if got, want := rdb.HLen(ctx, cpKey).Val(), fields+int64(count)+1; got != want {
		t.Errorf("checkpoint hash of %d fields, want %d", got, want)
	}
	if len(tup.PendingWrites) != len(first) {
		t.Fatalf("%d pending writes, want %d", len(tup.PendingWrites), len(first))
	}
	for i, w := range tup.PendingWrites {
		if w.Channel != first[i].Channel || w.Value != first[i].Value {
			t.Fatalf("pending write %d: %q = %v, want %q = %v", i, w.Channel, w.Value, first[i].Channel, first[i].Value)
		}
	}
}

// TestPutWritesBadArgs: put_writes.lua refuses a trace context count that
// is not 0 to 2, and arguments after the trace context that are not whole
// quadruples (a client bug), with BADARGS, before anything is written.
func TestPutWritesBadArgs(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx, rdb, s, cfg := rootCheckpoint(t, b.client(t), "bad")
			before := rawState(t, rdb, keys.Of(s).Prefix())
			l := keys.Of(s)
			shard := l.Shard("bad")
			keyList := []string{l.Head("bad"), l.Threads(shard), l.Events("bad"), l.Feed(shard)}
			head := []any{l.ShardBase(shard), keys.Encode("bad"), keys.Encode(""), cfg.CheckpointID, 0, -1, 0, 0, "abcdefghijklm", 0, 0, "task"}
			for name, trace := range map[string][]any{
				"a trace count that is no number":  {"x"},
				"a trace count beyond two pairs":   {3, "traceparent", "a", "tracestate", "b", "x", "y"},
				"a trace count past the arguments": {2, "traceparent", "a"},
			} {
				err := scriptrun.Run(ctx, rdb, scriptrun.PutWrites, keyList, append(slices.Clone(head), trace...)...).Err()
				if err == nil || !strings.HasPrefix(err.Error(), "BADARGS") {
					t.Errorf("%s: %v, want BADARGS", name, err)
				}
			}
			head = append(head, 0) // no trace context
			for name, writes := range map[string][]any{
				"a quadruple short of its channel": {"w:4:task:0", "1:a0:4:json1", "n"},
				"one whole, then one field":        {"w:4:task:0", "1:a0:4:json1", "n", "a", "w:4:task:1"},
			} {
				err := scriptrun.Run(ctx, rdb, scriptrun.PutWrites, keyList, append(slices.Clone(head), writes...)...).Err()
				if err == nil || !strings.HasPrefix(err.Error(), "BADARGS") {
					t.Errorf("%s: %v, want BADARGS", name, err)
				}
				if after := rawState(t, rdb, keys.Of(s).Prefix()); !slices.Equal(after, before) {
					t.Errorf("%s: keys changed:\nbefore %q\nafter  %q", name, before, after)
				}
			}
		})
	}
}
