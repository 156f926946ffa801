package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/redissaver"
)

// TestPutWritesManyInOneCall stores 2,500 writes in one PutWrites, to
// channels whose names take 1, 2 and 3 decimal digits to state their
// length: put_writes.lua asks whether the first 998 fields exist in the
// same HMGET as the checkpoint's head fields and the rest in chunks, and
// takes each channel's len ":" name for the event from the write's value.
// The event must name every channel in order, and the same writes sent
// again by a new call must store nothing (the fields past the first HMGET
// included) and announce nothing.
func TestPutWritesManyInOneCall(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := b.client(t)
			s := newSaver(t, rdb, redissaver.Options{})
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "many"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			lengths := []int{1, 9, 10, 99, 100, 150}
			writes := func(tag string) []checkpoint.Write {
				w := make([]checkpoint.Write, 2500)
				for i := range w {
					w[i] = checkpoint.Write{Channel: strings.Repeat(string(rune('a'+i%26)), lengths[i%len(lengths)]), Value: fmt.Sprintf("%s-%d", tag, i)}
				}
				return w
			}
			first := writes("first")
			if err := s.PutWrites(ctx, cfg, first, "task", ""); err != nil {
				t.Fatal(err)
			}
			events := s.Layout().Events("many")
			msgs, err := rdb.XRevRangeN(ctx, events, "+", "-", 1).Result()
			if err != nil || len(msgs) != 1 {
				t.Fatalf("last event: %v, %v", msgs, err)
			}
			names := make([]string, len(first))
			for i, w := range first {
				names[i] = w.Channel
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
			if len(tup.PendingWrites) != len(first) {
				t.Fatalf("%d pending writes, want %d", len(tup.PendingWrites), len(first))
			}
			for i, w := range tup.PendingWrites {
				if w.Channel != first[i].Channel || w.Value != first[i].Value {
					t.Fatalf("pending write %d: %q = %v, want %q = %v", i, w.Channel, w.Value, first[i].Channel, first[i].Value)
				}
			}
		})
	}
}
