package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
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
