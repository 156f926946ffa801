package redisstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/redis/go-redis/v9"
)

// Hand-edited or foreign data never panics: reads return ErrCorrupt for an
// item they cannot decode, and skip what they cannot rank or index.
func checkCorruptData(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	emb, _ := embed.NewHashing(16)
	prefix := redistest.Prefix(t)
	s, err := redisstore.New(context.Background(), rdb, redisstore.Options{Prefix: prefix, Embedder: emb, Dims: 16})
	if err != nil {
		t.Fatal(err)
	}
	base := "{" + prefix + "}:"
	t.Cleanup(func() {
		for _, k := range []string{"ns", "exp", "n:c", "x:c", "i:c:bad-json", "i:c:bad-time", "i:c:bad-vec", "i:c:good"} {
			rdb.Del(context.Background(), base+k)
		}
	})
	for _, k := range []string{"bad-json", "bad-time", "bad-vec", "good"} {
		if err := s.Put(ctx, []string{"c"}, k, map[string]any{"text": "corrupt " + k}); err != nil {
			t.Fatal(err)
		}
	}
	rdb.HSet(ctx, base+"i:c:bad-json", "v", "{not json")
	rdb.HSet(ctx, base+"i:c:bad-time", "u", "yesterday")
	rdb.HSet(ctx, base+"i:c:bad-vec", "q", "short", "s", "x y", "w", "odd")
	rdb.ZAdd(ctx, base+"ns", redis.Z{Member: "no separator"})

	_, err = s.Get(ctx, []string{"c"}, "bad-json")
	if !errors.Is(err, redisstore.ErrCorrupt) {
		t.Fatalf("Get of bad JSON: %v", err)
	}
	_, err = s.Get(ctx, []string{"c"}, "bad-time")
	if !errors.Is(err, redisstore.ErrCorrupt) {
		t.Fatalf("Get of a bad timestamp: %v", err)
	}
	if _, err := s.Search(ctx, []string{"c"}, redisstore.SearchOptions{}); !errors.Is(err, redisstore.ErrCorrupt) {
		t.Fatalf("Search over bad items: %v", err)
	}
	// A filter skips what it cannot decode; a query skips bad vectors.
	got, err := s.Search(ctx, []string{"c"}, redisstore.SearchOptions{Filter: map[string]any{"text": "corrupt good"}})
	if err != nil || len(got) != 1 || got[0].Key != "good" {
		t.Fatalf("filtered search: %v, %v", got, err)
	}
	got, err = s.Search(ctx, []string{"c"}, redisstore.SearchOptions{Query: "corrupt good", Limit: 1})
	if err != nil || len(got) != 1 || got[0].Key != "good" {
		t.Fatalf("query search: %v, %v", got, err)
	}
	got, err = s.Search(ctx, []string{"c"}, redisstore.SearchOptions{Query: "corrupt bad-vec", Filter: map[string]any{"text": "corrupt bad-vec"}})
	if err != nil || len(got) != 0 {
		t.Fatalf("query search of the bad vectors: %v, %v", got, err)
	}
	nss, err := s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{})
	if err != nil || len(nss) != 1 {
		t.Fatalf("ListNamespaces with a foreign registry member: %v, %v", nss, err)
	}
}

func TestCorruptDataMiniredis(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkCorruptData(t, rdb)
}

func TestCorruptDataRealRedis(t *testing.T) {
	checkCorruptData(t, redistest.Real(t))
}
