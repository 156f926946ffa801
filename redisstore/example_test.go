package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/redis/go-redis/v9"
)

func Example() {
	mr, err := miniredis.Run() // an in-process Redis; any Redis 7+ works the same
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	store, err := redisstore.New(context.Background(), rdb, redisstore.Options{Prefix: "myapp:memory"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	user := []string{"users", "alice", "memories"}

	// Memories of one user, written from any thread.
	_ = store.Put(ctx, user, "units", map[string]any{"text": "prefers metric units", "kind": "preference"})
	_ = store.Put(ctx, user, "city", map[string]any{"text": "lives in Lyon", "kind": "fact"})
	_ = store.Put(ctx, user, "tone", map[string]any{"text": "likes short answers", "kind": "preference", "strength": 3})

	it, err := store.Get(ctx, user, "city")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("get:", it.Value["text"])

	// An update keeps CreatedAt and moves UpdatedAt.
	_ = store.Put(ctx, user, "city", map[string]any{"text": "lives in Paris", "kind": "fact"})
	again, _ := store.Get(ctx, user, "city")
	fmt.Println("updated:", again.Value["text"], again.CreatedAt.Equal(it.CreatedAt), again.UpdatedAt.After(it.UpdatedAt))

	// Newest first, filtered inside Redis.
	prefs, err := store.Search(ctx, []string{"users", "alice"}, redisstore.SearchOptions{
		Filter: map[string]any{"kind": "preference"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range prefs {
		fmt.Println("preference:", p.Key, p.Value["text"])
	}
	strong, _ := store.Search(ctx, nil, redisstore.SearchOptions{Filter: map[string]any{"strength": map[string]any{"$gte": 2}}})
	fmt.Println("strong:", len(strong), strong[0].Key)

	_ = store.Delete(ctx, user, "tone")
	_, err = store.Get(ctx, user, "tone")
	fmt.Println("deleted:", errors.Is(err, redisstore.ErrNotFound))
	// Output:
	// get: lives in Lyon
	// updated: lives in Paris true true
	// preference: tone likes short answers
	// preference: units prefers metric units
	// strong: 1 tone
	// deleted: true
}

func ExampleStore_Search_semantic() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	emb, err := embed.NewHashing(256) // deterministic and local; use a real model in production
	if err != nil {
		log.Fatal(err)
	}
	store, err := redisstore.New(context.Background(), rdb, redisstore.Options{Embedder: emb, Dims: emb.Dims(), Fields: []string{"text"}})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ns := []string{"users", "bob", "memories"}
	_ = store.Put(ctx, ns, "1", map[string]any{"text": "allergic to peanuts"})
	_ = store.Put(ctx, ns, "2", map[string]any{"text": "plays the cello on weekends"})
	_ = store.Put(ctx, ns, "3", map[string]any{"text": "peanut butter is banned at home"})
	_ = store.Put(ctx, ns, "4", map[string]any{"text": "internal note"}, redisstore.NoIndex())

	hits, err := store.Search(ctx, []string{"users", "bob"}, redisstore.SearchOptions{Query: "peanuts allergy", Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.2f %s\n", h.Key, *h.Score, h.Value["text"])
	}
	// Output:
	// 1 0.60 allergic to peanuts
	// 3 0.13 peanut butter is banned at home
}

func ExampleStore_ListNamespaces() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	store, _ := redisstore.New(context.Background(), rdb, redisstore.Options{})
	ctx := context.Background()
	for _, ns := range [][]string{
		{"users", "alice", "memories"}, {"users", "alice", "settings"},
		{"users", "bob", "memories"}, {"teams", "red", "memories"},
	} {
		_ = store.Put(ctx, ns, "k", map[string]any{})
	}
	all, _ := store.ListNamespaces(ctx, redisstore.ListNamespacesOptions{})
	fmt.Println(all)
	users, _ := store.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Prefix: []string{"users"}, MaxDepth: 2})
	fmt.Println(users)
	memories, _ := store.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Prefix: []string{"*", "*"}, Suffix: []string{"memories"}})
	fmt.Println(memories)
	// Output:
	// [[teams red memories] [users alice memories] [users alice settings] [users bob memories]]
	// [[users alice] [users bob]]
	// [[teams red memories] [users alice memories] [users bob memories]]
}

func ExampleStore_Batch() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	store, _ := redisstore.New(context.Background(), rdb, redisstore.Options{})
	ctx := context.Background()
	_ = store.Put(ctx, []string{"docs"}, "a", map[string]any{"v": 1})

	// Reads see the store as it was before the batch's writes: one pipeline
	// for the reads, then one script for the writes.
	res, err := store.Batch(ctx, []redisstore.Op{
		redisstore.PutOp{Namespace: []string{"docs"}, Key: "b", Value: map[string]any{"v": 2}},
		redisstore.GetOp{Namespace: []string{"docs"}, Key: "a"},
		redisstore.GetOp{Namespace: []string{"docs"}, Key: "b"},
		redisstore.SearchOp{NamespacePrefix: []string{"docs"}},
		redisstore.DeleteOp{Namespace: []string{"docs"}, Key: "a"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res[1].Item.Value["v"], res[2].Item == nil, len(res[3].Items))
	after, _ := store.Search(ctx, []string{"docs"}, redisstore.SearchOptions{})
	fmt.Println(len(after), after[0].Key)
	// Output:
	// 1 true 1
	// 1 b
}

// A store that encrypts its items' values at rest: a value moved by hand to
// another item does not read back, and an Embedder needs EmbeddingsInClear.
func ExampleOptions_encryption() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	key := make([]byte, checkpoint.KeySize) // in production: 32 random bytes from a secret store
	ring, err := checkpoint.NewKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		log.Fatal(err)
	}
	store, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: "vault", Encryption: ring})
	if err != nil {
		log.Fatal(err)
	}
	_ = store.Put(ctx, []string{"users", "alice"}, "pin", map[string]any{"text": "4921"})
	_ = store.Put(ctx, []string{"users", "bob"}, "pin", map[string]any{"text": "0000"})

	it, _ := store.Get(ctx, []string{"users", "alice"}, "pin")
	fmt.Println("alice:", it.Value["text"])
	stored, _ := rdb.HGet(ctx, "{vault}:i:users:alice:pin", "v").Result()
	fmt.Println("stored encrypted:", stored[0] == 'e')

	// Alice's ciphertext copied over Bob's item: refused, not answered.
	_ = rdb.HSet(ctx, "{vault}:i:users:bob:pin", "v", stored).Err()
	_, err = store.Get(ctx, []string{"users", "bob"}, "pin")
	fmt.Println("moved:", errors.Is(err, redisstore.ErrDecrypt), errors.Is(err, checkpoint.ErrDecrypt))

	emb, _ := embed.NewHashing(8)
	_, err = redisstore.New(ctx, rdb, redisstore.Options{Prefix: "vault2", Encryption: ring, Embedder: emb, Dims: 8})
	fmt.Println("embedder without EmbeddingsInClear:", errors.Is(err, redisstore.ErrInvalidOptions))
	// Output:
	// alice: 4921
	// stored encrypted: true
	// moved: true true
	// embedder without EmbeddingsInClear: true
}
