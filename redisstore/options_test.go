package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/redis/go-redis/v9"
)

type zeroEmbedder struct{}

func (zeroEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)), nil
}

func TestNewValidates(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	bad := map[string]Options{
		"braces":             {Prefix: "a{b"},
		"space":              {Prefix: "a b"},
		"long prefix":        {Prefix: strings.Repeat("p", 129)},
		"negative TTL":       {TTL: -time.Second},
		"sub-ms TTL":         {TTL: time.Microsecond},
		"dims without emb":   {Dims: 3},
		"fields without emb": {Fields: []string{"a"}},
		"emb without dims":   {Embedder: zeroEmbedder{}},
		"too many dims":      {Embedder: zeroEmbedder{}, Dims: MaxDims + 1},
		"empty fields":       {Embedder: zeroEmbedder{}, Dims: 3, Fields: []string{}},
		"bad field":          {Embedder: zeroEmbedder{}, Dims: 3, Fields: []string{"a..b"}},
	}
	for name, o := range bad {
		if _, err := New(context.Background(), rdb, o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: New = %v, want ErrInvalidOptions", name, err)
		}
	}
	if _, err := New(context.Background(), nil, Options{}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("nil client: %v", err)
	}
	s, err := New(context.Background(), rdb, Options{Embedder: zeroEmbedder{}, Dims: 3})
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Options(); o.Prefix != DefaultPrefix || len(o.Fields) != 1 || o.Fields[0] != "$" {
		t.Fatalf("defaults: %+v", o)
	}
	if s.base != "{redcheck:store}:" || s.registry != "{redcheck:store}:ns" {
		t.Fatalf("base %q, registry %q", s.base, s.registry)
	}
	fields := []string{"a", "b"}
	s, err = New(context.Background(), rdb, Options{Prefix: "p:q", Embedder: zeroEmbedder{}, Dims: 3, Fields: fields, TTL: time.Minute, RefreshOnRead: RefreshOn})
	if err != nil {
		t.Fatal(err)
	}
	fields[0] = "changed"
	if s.Options().Fields[0] != "a" {
		t.Fatal("Options.Fields aliases the caller's slice")
	}
}

// TestMetaKeyLost: a store prefix that holds items but lost its meta key
// is refused with checkpoint.ErrDataLoss, whatever the Dims, and the key
// stays absent; one that holds nothing gets its meta key again.
func TestMetaKeyLost(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	ctx := context.Background()
	s, err := New(ctx, rdb, Options{Prefix: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, "{m}:meta").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, rdb, Options{Prefix: "m"}); err != nil || rdb.Exists(ctx, "{m}:meta").Val() != 1 {
		t.Fatalf("an empty prefix without its meta key: %v", err)
	}
	if err := s.Put(ctx, []string{"users"}, "k", map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, "{m}:meta").Err(); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Prefix: "m"}, {Prefix: "m", Embedder: zeroEmbedder{}, Dims: 3}} {
		if _, err := New(ctx, rdb, o); !errors.Is(err, checkpoint.ErrDataLoss) || !strings.Contains(err.Error(), "{m}:meta") {
			t.Errorf("Dims %d: %v, want ErrDataLoss naming the meta key", o.Dims, err)
		}
	}
	if rdb.Exists(ctx, "{m}:meta").Val() != 0 {
		t.Error("New wrote the lost meta key again")
	}
}

// TestMetaMismatch: a store prefix remembers its format and vector length;
// a store with other Dims is refused.
func TestMetaMismatch(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	ctx := context.Background()
	if _, err := New(ctx, rdb, Options{Prefix: "m", Embedder: zeroEmbedder{}, Dims: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, rdb, Options{Prefix: "m", Embedder: zeroEmbedder{}, Dims: 4}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("other dims: %v", err)
	}
	if err := rdb.HSet(ctx, "{m}:meta", "format", "store-0").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, rdb, Options{Prefix: "m", Embedder: zeroEmbedder{}, Dims: 3}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("other format: %v", err)
	}
}
