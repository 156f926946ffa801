package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
)

// The key layout of package doc, pinned: every key, its type, and that
// nothing is left once the items are gone.
func TestKeyLayout(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	ctx := context.Background()
	emb, _ := embed.NewHashing(8)
	s, err := redisstore.New(context.Background(), rdb, redisstore.Options{Prefix: "app:mem", Embedder: emb, Dims: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, []string{"users", "a:b"}, "k 1", map[string]any{"text": "hi"}, redisstore.WithTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, []string{"users", "a:b"}, "plain", map[string]any{"n": 1}, redisstore.NoIndex()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"{app:mem}:meta":                "hash",
		"{app:mem}:ns":                  "zset",
		"{app:mem}:exp":                 "zset",
		"{app:mem}:n:users:a%3Ab":       "zset",
		"{app:mem}:x:users:a%3Ab":       "zset",
		"{app:mem}:i:users:a%3Ab:k%201": "hash",
		"{app:mem}:i:users:a%3Ab:plain": "hash",
	}
	got := map[string]string{}
	for _, k := range mr.Keys() {
		got[k] = mr.Type(k)
	}
	if len(got) != len(want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	for k, typ := range want {
		if got[k] != typ {
			t.Errorf("key %q: type %q, want %q", k, got[k], typ)
		}
	}
	fields, _ := mr.HKeys("{app:mem}:i:users:a%3Ab:k%201")
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"c", "n", "t", "u", "v", "w"}) {
		t.Errorf("item fields %v", fields)
	}
	fields, _ = mr.HKeys("{app:mem}:i:users:a%3Ab:plain")
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"c", "u", "v"}) {
		t.Errorf("unindexed item fields %v", fields)
	}
	if v := mr.HGet("{app:mem}:i:users:a%3Ab:plain", "v"); v != `{"n":1}` {
		t.Errorf("value stored as %q", v)
	}
	if ttl := mr.TTL("{app:mem}:i:users:a%3Ab:k%201"); ttl > time.Hour || ttl < time.Hour-time.Second {
		t.Errorf("item TTL %v", ttl)
	}
	members, _ := mr.ZMembers("{app:mem}:ns")
	if !slices.Equal(members, []string{"", "users\x00\x01a:b\x00\x01\x00\x00users:a%3Ab"}) {
		t.Errorf("registry %q, want the marker and the namespace", members)
	}
	// Every key carries the store's hash tag: one Cluster slot.
	for k := range got {
		if !strings.HasPrefix(k, "{app:mem}:") {
			t.Errorf("key %q outside the hash tag", k)
		}
	}

	// Deleting every item leaves no key behind but the prefix's meta key and
	// the registry with its marker alone.
	for _, k := range []string{"k 1", "plain"} {
		if err := s.Delete(ctx, []string{"users", "a:b"}, k); err != nil {
			t.Fatal(err)
		}
	}
	empty := func(when string) {
		t.Helper()
		if keys := mr.Keys(); !slices.Equal(keys, []string{"{app:mem}:meta", "{app:mem}:ns"}) {
			t.Fatalf("keys left %s: %q", when, keys)
		}
		if members, _ := mr.ZMembers("{app:mem}:ns"); !slices.Equal(members, []string{""}) {
			t.Fatalf("registry %s: %q", when, members)
		}
	}
	empty("after deleting every item")

	// Neither does expiry, once swept.
	for _, k := range []string{"a", "b"} {
		if err := s.Put(ctx, []string{"t", k}, k, map[string]any{}, redisstore.WithTTL(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	mr.FastForward(2 * time.Minute)
	mr.SetTime(time.Now().Add(2 * time.Minute))
	if n, err := s.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	empty("after expiry and Sweep")
}

// UpdatedAt grows with every Put even when the server's clock does not move.
func TestUpdatedAtGrowsOnAFrozenClock(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	mr.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	s := newStore(t, rdb, redisstore.Options{})
	ctx := context.Background()
	var last *redisstore.Item
	for i := range 5 {
		if err := s.Put(ctx, []string{"f"}, "k", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		it, err := s.Get(ctx, []string{"f"}, "k")
		if err != nil {
			t.Fatal(err)
		}
		if last != nil && (!it.UpdatedAt.After(last.UpdatedAt) || !it.CreatedAt.Equal(last.CreatedAt)) {
			t.Fatalf("put %d: created %v updated %v after created %v updated %v", i, it.CreatedAt, it.UpdatedAt, last.CreatedAt, last.UpdatedAt)
		}
		if i == 0 && !it.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)) {
			t.Fatalf("CreatedAt %v is not the server's clock", it.CreatedAt)
		}
		last = it
	}
}

// More namespaces than the list script reads per batch.
func TestManyNamespaces(t *testing.T) {
	_, mini := redistest.Mini(t)
	for tier, s := range map[string]*redisstore.Store{
		"miniredis": newStore(t, mini, redisstore.Options{}),
		"redis":     newStore(t, redistest.Real(t), redisstore.Options{}),
	} {
		t.Run(tier, func(t *testing.T) {
			ctx := context.Background()
			var ops []redisstore.Op
			var want [][]string
			for i := range 700 {
				ns := []string{"n", string(rune('a' + i%26)), strings.Repeat("x", i%5) + string(rune('0'+i%10)), time.Duration(i).String()}
				ops = append(ops, redisstore.PutOp{Namespace: ns, Key: "k", Value: map[string]any{}})
				want = append(want, ns)
			}
			if _, err := s.Batch(ctx, ops); err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(want, slices.Compare)
			got, err := s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("got %d namespaces, want %d, in order", len(got), len(want))
			}
			got, err = s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Offset: 650, Limit: 100, Suffix: []string{"*"}})
			if err != nil || !slices.EqualFunc(got, want[650:], slices.Equal) {
				t.Fatalf("tail page: %d namespaces, %v", len(got), err)
			}
			items, err := s.Search(ctx, []string{"n"}, redisstore.SearchOptions{Limit: 1000})
			if err != nil || len(items) != 700 {
				t.Fatalf("search: %d items, %v", len(items), err)
			}
		})
	}
}
