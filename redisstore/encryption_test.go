package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/graphstate/redcheck/redisstore/storetest"
	"github.com/redis/go-redis/v9"
)

func ring(t testing.TB, current string, ids ...string) *checkpoint.Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for _, id := range ids {
		keys[id] = bytes.Repeat([]byte(id[len(id)-1:]), checkpoint.KeySize)
	}
	r, err := checkpoint.NewKeyring(current, keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// itemValues returns the stored v field of every item hash under prefix,
// by key.
func itemValues(t testing.TB, rdb redis.UniversalClient, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	ks, err := rdb.Keys(ctx, "{"+prefix+"}:i:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range ks {
		v, err := rdb.HGet(ctx, k, "v").Result()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// encryptedEnv is env with encryption on in every store the kit opens (and
// EmbeddingsInClear with an Embedder); each store's items are checked to be
// stored encrypted when its case ends.
func encryptedEnv(t *testing.T, env storetest.Env, rdb redis.UniversalClient) storetest.Env {
	r := ring(t, "k1", "k1")
	inner := env.New
	env.New = func(t *testing.T, o redisstore.Options) *redisstore.Store {
		o.Encryption = r
		o.EmbeddingsInClear = o.Embedder != nil
		s := inner(t, o)
		t.Cleanup(func() {
			for k, v := range itemValues(t, rdb, s.Options().Prefix) {
				if !strings.HasPrefix(v, "e\x01\x02k1") {
					t.Errorf("%s: stored in the clear: %.40q", k, v)
				}
			}
		})
		return s
	}
	return env
}

// TestKitEncrypted: the whole conformance kit with encryption on.
func TestKitEncryptedMiniredis(t *testing.T) {
	env, rdb := miniKit(t)
	storetest.Run(t, encryptedEnv(t, env, rdb))
}

func TestKitEncryptedRealRedis(t *testing.T) {
	rdb := redistest.Real(t)
	env := realEnv(t)
	env.New = func(t *testing.T, o redisstore.Options) *redisstore.Store { return newStore(t, rdb, o) }
	storetest.Run(t, encryptedEnv(t, env, rdb))
}

// clients returns a miniredis client and a real redis-server client, by
// name.
func clients(t *testing.T) map[string]redis.UniversalClient {
	_, mini := redistest.Mini(t)
	return map[string]redis.UniversalClient{"miniredis": mini, "redis": redistest.Real(t)}
}

func openStore(t *testing.T, rdb redis.UniversalClient, prefix string, o redisstore.Options) *redisstore.Store {
	t.Helper()
	o.Prefix = prefix
	s, err := redisstore.New(context.Background(), rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEncryptedRoundTrip: every read answers what was put; the stored form
// is the envelope, without a byte of the value in the clear.
func TestEncryptedRoundTrip(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range clients(t) {
		t.Run(name, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			s := openStore(t, rdb, prefix, redisstore.Options{Encryption: ring(t, "k1", "k1")})
			ns := []string{"users", "u:1", "memories"}
			for i := range 5 {
				if err := s.Put(ctx, ns, fmt.Sprint("m", i), map[string]any{"text": fmt.Sprint("secret note ", i), "i": i}); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range itemValues(t, rdb, prefix) {
				if !strings.HasPrefix(v, "e\x01\x02k1") || strings.Contains(v, "secret") || strings.Contains(v, "json") {
					t.Errorf("%s stored as %q", k, v)
				}
			}
			it, err := s.Get(ctx, ns, "m3")
			if err != nil || it.Value["text"] != "secret note 3" || it.Value["i"] != int64(3) {
				t.Fatalf("Get = %+v, %v", it, err)
			}
			hits, err := s.Search(ctx, []string{"users"}, redisstore.SearchOptions{Filter: map[string]any{"i": map[string]any{"$gte": 2}}, Limit: 10})
			if err != nil || len(hits) != 3 {
				t.Fatalf("Search with a filter = %d items, %v", len(hits), err)
			}
			for _, h := range hits {
				if !strings.HasPrefix(h.Value["text"].(string), "secret note ") {
					t.Errorf("Search answered %v", h.Value)
				}
			}
			res, err := s.Batch(ctx, []redisstore.Op{
				redisstore.GetOp{Namespace: ns, Key: "m0"},
				redisstore.PutOp{Namespace: ns, Key: "m9", Value: map[string]any{"text": "batched"}},
				redisstore.SearchOp{NamespacePrefix: ns, Options: redisstore.SearchOptions{Limit: 1}},
			})
			if err != nil || res[0].Item == nil || res[0].Item.Value["text"] != "secret note 0" || len(res[2].Items) != 1 {
				t.Fatalf("Batch = %+v, %v", res, err)
			}
			if it, err := s.Get(ctx, ns, "m9"); err != nil || it.Value["text"] != "batched" {
				t.Fatalf("Get of a batched put = %+v, %v", it, err)
			}
		})
	}
}

// checkDecryptErr fails unless err is the store's ErrDecrypt (and so
// checkpoint.ErrDecrypt) and names no byte of the value.
func checkDecryptErr(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, redisstore.ErrDecrypt) || !errors.Is(err, checkpoint.ErrDecrypt) || !errors.Is(err, checkpoint.ErrSerialization) {
		t.Errorf("%s: %v, want redisstore.ErrDecrypt", what, err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("%s: the error shows the value: %v", what, err)
	}
}

// TestEncryptedValueMisplaced: a ciphertext moved by hand to another key or
// namespace, or to another store prefix, and a flipped bit, fail with
// ErrDecrypt in Get and in a filtered Search.
func TestEncryptedValueMisplaced(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range clients(t) {
		t.Run(name, func(t *testing.T) {
			r := ring(t, "k1", "k1")
			prefix := redistest.Prefix(t)
			s := openStore(t, rdb, prefix, redisstore.Options{Encryption: r})
			other := openStore(t, rdb, prefix+"2", redisstore.Options{Encryption: r})
			for _, st := range []*redisstore.Store{s, other} {
				for _, a := range []struct {
					ns  []string
					key string
				}{{[]string{"a"}, "k"}, {[]string{"a"}, "k2"}, {[]string{"b"}, "k"}, {[]string{"a", "b"}, "k"}} {
					if err := st.Put(ctx, a.ns, a.key, map[string]any{"text": "secret of " + strings.Join(a.ns, "/") + "/" + a.key}); err != nil {
						t.Fatal(err)
					}
				}
			}
			base := "{" + prefix + "}:i:"
			src, err := rdb.HGet(ctx, base+"a:k", "v").Result()
			if err != nil {
				t.Fatal(err)
			}
			flipped := []byte(src)
			flipped[len(flipped)-20] ^= 1
			otherStore, _ := rdb.HGet(ctx, "{"+prefix+"2}:i:a:k", "v").Result()
			for _, c := range []struct {
				name, target, value string
				ns                  []string
				key                 string
			}{
				{"another key", base + "a:k2", src, []string{"a"}, "k2"},
				{"another namespace", base + "b:k", src, []string{"b"}, "k"},
				{"a deeper namespace", base + "a:b:k", src, []string{"a", "b"}, "k"},
				{"another store", base + "a:k", otherStore, []string{"a"}, "k"},
				{"a flipped bit", base + "a:k", string(flipped), []string{"a"}, "k"},
				{"a changed key id", base + "a:k", src[:3] + "k2" + src[5:], []string{"a"}, "k"},
			} {
				t.Run(c.name, func(t *testing.T) {
					old, err := rdb.HGet(ctx, c.target, "v").Result()
					if err != nil {
						t.Fatal(err)
					}
					if err := rdb.HSet(ctx, c.target, "v", c.value).Err(); err != nil {
						t.Fatal(err)
					}
					defer rdb.HSet(ctx, c.target, "v", old)
					_, err = s.Get(ctx, c.ns, c.key)
					checkDecryptErr(t, "Get", err)
					_, err = s.Search(ctx, nil, redisstore.SearchOptions{Filter: map[string]any{"text": map[string]any{"$ne": ""}}, Limit: 100})
					checkDecryptErr(t, "Search with a filter", err)
					_, err = s.Batch(ctx, []redisstore.Op{redisstore.GetOp{Namespace: c.ns, Key: c.key}})
					checkDecryptErr(t, "Batch", err)
				})
			}
			// Put back, every item reads again.
			if _, err := s.Search(ctx, nil, redisstore.SearchOptions{Filter: map[string]any{"text": map[string]any{"$ne": ""}}}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEncryptedPlaintextMigration: items put before encryption was turned
// on are refused by an encrypting store, read under ReadPlaintext (while
// new puts are encrypted); an encrypted item is refused by a store without
// a keyring.
func TestEncryptedPlaintextMigration(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range clients(t) {
		t.Run(name, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			plain := openStore(t, rdb, prefix, redisstore.Options{})
			ns := []string{"n"}
			if err := plain.Put(ctx, ns, "old", map[string]any{"text": "secret old"}); err != nil {
				t.Fatal(err)
			}
			r := ring(t, "k1", "k1")
			strict := openStore(t, rdb, prefix, redisstore.Options{Encryption: r})
			_, err := strict.Get(ctx, ns, "old")
			checkDecryptErr(t, "Get of a plaintext item", err)
			_, err = strict.Search(ctx, ns, redisstore.SearchOptions{Filter: map[string]any{"text": "secret old"}})
			checkDecryptErr(t, "Search of a plaintext item", err)

			migrating := openStore(t, rdb, prefix, redisstore.Options{Encryption: r, ReadPlaintext: true})
			if it, err := migrating.Get(ctx, ns, "old"); err != nil || it.Value["text"] != "secret old" {
				t.Fatalf("Get under ReadPlaintext = %+v, %v", it, err)
			}
			if err := migrating.Put(ctx, ns, "new", map[string]any{"text": "secret new"}); err != nil {
				t.Fatal(err)
			}
			hits, err := migrating.Search(ctx, ns, redisstore.SearchOptions{Filter: map[string]any{"text": map[string]any{"$gt": "secret"}}})
			if err != nil || len(hits) != 2 {
				t.Fatalf("Search under ReadPlaintext = %d items, %v", len(hits), err)
			}
			if v := itemValues(t, rdb, prefix)["{"+prefix+"}:i:n:new"]; !strings.HasPrefix(v, "e") {
				t.Errorf("a put under ReadPlaintext is stored as %q", v)
			}
			if it, err := strict.Get(ctx, ns, "new"); err != nil || it.Value["text"] != "secret new" {
				t.Fatalf("Get = %+v, %v", it, err)
			}
			_, err = plain.Get(ctx, ns, "new")
			checkDecryptErr(t, "Get of an encrypted item without a keyring", err)
			_, err = plain.Search(ctx, ns, redisstore.SearchOptions{Filter: map[string]any{"text": "x"}})
			checkDecryptErr(t, "Search of an encrypted item without a keyring", err)
		})
	}
}

// TestEncryptedRotation: a ring whose current key is new reads items of the
// old key and the new; puts use the new key; a ring without the old key
// refuses the old items.
func TestEncryptedRotation(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range clients(t) {
		t.Run(name, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			ns := []string{"n"}
			s1 := openStore(t, rdb, prefix, redisstore.Options{Encryption: ring(t, "k1", "k1")})
			if err := s1.Put(ctx, ns, "a", map[string]any{"text": "secret a"}); err != nil {
				t.Fatal(err)
			}
			s2 := openStore(t, rdb, prefix, redisstore.Options{Encryption: ring(t, "k2", "k1", "k2")})
			if err := s2.Put(ctx, ns, "b", map[string]any{"text": "secret b"}); err != nil {
				t.Fatal(err)
			}
			vals := itemValues(t, rdb, prefix)
			if !strings.HasPrefix(vals["{"+prefix+"}:i:n:a"], "e\x01\x02k1") || !strings.HasPrefix(vals["{"+prefix+"}:i:n:b"], "e\x01\x02k2") {
				t.Fatalf("key ids: %.6q %.6q", vals["{"+prefix+"}:i:n:a"], vals["{"+prefix+"}:i:n:b"])
			}
			for _, k := range []string{"a", "b"} {
				if it, err := s2.Get(ctx, ns, k); err != nil || it.Value["text"] != "secret "+k {
					t.Errorf("Get %s through both keys = %+v, %v", k, it, err)
				}
			}
			if _, err := s1.Get(ctx, ns, "b"); err == nil || !strings.Contains(err.Error(), `"k2"`) {
				t.Errorf("a ring without k2 read b: %v", err)
			} else {
				checkDecryptErr(t, "Get without the new key", err)
			}
			s3 := openStore(t, rdb, prefix, redisstore.Options{Encryption: ring(t, "k2", "k2")})
			_, err := s3.Get(ctx, ns, "a")
			checkDecryptErr(t, "Get without the old key", err)
			if it, err := s3.Get(ctx, ns, "b"); err != nil || it.Value["text"] != "secret b" {
				t.Errorf("Get b = %+v, %v", it, err)
			}
		})
	}
}

// TestEncryptedOptions: the options New refuses, and semantic search on an
// encrypted store with EmbeddingsInClear.
func TestEncryptedOptions(t *testing.T) {
	ctx := context.Background()
	_, rdb := redistest.Mini(t)
	emb, err := embed.NewHashing(16)
	if err != nil {
		t.Fatal(err)
	}
	r := ring(t, "k1", "k1")
	for _, c := range []struct {
		name string
		o    redisstore.Options
	}{
		{"ReadPlaintext without Encryption", redisstore.Options{ReadPlaintext: true}},
		{"an Embedder with Encryption", redisstore.Options{Encryption: r, Embedder: emb, Dims: 16}},
		{"EmbeddingsInClear without Encryption", redisstore.Options{Embedder: emb, Dims: 16, EmbeddingsInClear: true}},
		{"EmbeddingsInClear without an Embedder", redisstore.Options{Encryption: r, EmbeddingsInClear: true}},
	} {
		c.o.Prefix = redistest.Prefix(t)
		if _, err := redisstore.New(ctx, rdb, c.o); !errors.Is(err, redisstore.ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", c.name, err)
		}
	}
	s := openStore(t, rdb, redistest.Prefix(t), redisstore.Options{Encryption: r, Embedder: emb, Dims: 16, EmbeddingsInClear: true, Fields: []string{"text"}})
	for _, text := range []string{"red apples", "blue sky", "green grass"} {
		if err := s.Put(ctx, []string{"n"}, text, map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := s.Search(ctx, nil, redisstore.SearchOptions{Query: "blue sky", Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Key != "blue sky" || hits[0].Score == nil {
		t.Fatalf("Search = %+v, %v", hits, err)
	}
}
