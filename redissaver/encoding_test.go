package redissaver_test

import (
	"context"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// TestIndexesBecomeSkiplists: put.lua gives the indexes that grow by a
// member at each Put Redis's skiplist encoding, where a listpack would
// insert by a linear scan (lib.lua's skiplist): the shard's index of every
// checkpoint when a Put creates it, the namespace's and the thread's when
// the namespace's reaches 16 checkpoints, and again at every multiple of 16
// (a copied thread, whose indexes a bulk ZADD made listpacks, converts at
// the next one); and the shard's registry of threads each time a new
// thread brings it to a multiple of 16. Smaller sets stay listpacks, and
// the member that converts a set is never left in it. Real Redis only:
// miniredis has no encodings.
func TestIndexesBecomeSkiplists(t *testing.T) {
	rdb := redistest.Real(t)
	ctx := context.Background()
	limits, err := rdb.ConfigGet(ctx, "zset-max-listpack-*").Result()
	if err != nil {
		t.Skipf("CONFIG GET refused (%v): the encodings depend on the server's limits", err)
	}
	if limits["zset-max-listpack-entries"] != "128" || limits["zset-max-listpack-value"] != "64" {
		t.Skipf("the server's zset listpack limits %v are not Redis's defaults", limits)
	}
	s := newSaver(t, rdb, redissaver.Options{Shards: 1})
	l := keys.Of(s)
	long := strings.Repeat("\x00", 65)
	encoding := func(key string) string {
		t.Helper()
		enc, err := rdb.ObjectEncoding(ctx, key).Result()
		if err != nil {
			t.Fatalf("OBJECT ENCODING %s: %v", key, err)
		}
		if _, err := rdb.ZScore(ctx, key, long).Result(); err != redis.Nil {
			t.Fatalf("%s holds the converting member (err %v)", key, err)
		}
		return enc
	}
	// indexes returns the namespace's and the thread's index of th.
	indexes := func(th string) (string, string) {
		t.Helper()
		gen, err := rdb.HGet(ctx, l.Head(th), "g").Result()
		if err != nil {
			t.Fatal(err)
		}
		return l.Index(th, gen, ""), l.ThreadIndex(th, gen)
	}
	put := func(parent checkpoint.Config) checkpoint.Config {
		t.Helper()
		v := checkpoint.NextVersion("")
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts", ChannelValues: map[string]any{"a": 1},
			ChannelVersions: map[string]string{"a": v}}
		c, err := s.Put(ctx, parent, cp, checkpoint.Metadata{"step": 0}, map[string]string{"a": v})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := func(key, enc string, n int) {
		t.Helper()
		if got := encoding(key); got != enc {
			t.Fatalf("after Put %d %s is a %s, want a %s", n, key, got, enc)
		}
	}

	c := checkpoint.Config{ThreadID: "grows"}
	for n := 1; n <= 33; n++ {
		c = put(c)
		want(l.All(0), "skiplist", n)
		nb, gb := indexes("grows")
		enc := "listpack"
		if n >= 16 {
			enc = "skiplist"
		}
		want(nb, enc, n)
		want(gb, enc, n)
	}

	// The shard's registry (its marker and a member per thread) converts
	// when a new thread brings it to 16 members: the 15th thread.
	for n := 2; n <= 17; n++ {
		put(checkpoint.Config{ThreadID: fmt.Sprintf("thread-%d", n)})
		enc := "listpack"
		if n >= 15 {
			enc = "skiplist"
		}
		want(l.Threads(0), enc, n)
	}

	// A copy is written by bulk ZADDs (listpacks): its next multiple of 16
	// converts it.
	small := checkpoint.Config{ThreadID: "small"}
	for range 20 {
		small = put(small)
	}
	if err := s.CopyThread(ctx, "small", "copied"); err != nil {
		t.Fatal(err)
	}
	last, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "copied"})
	if err != nil || last == nil {
		t.Fatalf("the copy's latest: %v, %v", last, err)
	}
	c = last.Config
	for n := 21; n <= 32; n++ {
		c = put(c)
		nb, gb := indexes("copied")
		enc := "listpack"
		if n == 32 {
			enc = "skiplist"
		}
		want(nb, enc, n)
		want(gb, enc, n)
	}
}
