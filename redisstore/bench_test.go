package redisstore_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
)

// Benchmarks run on a real Redis only, never on miniredis. Each reports the
// round trips it made per operation and the time Redis itself spent running
// the operation's script (server-µs/op), and the CPU time Redis's main
// thread used per operation (server-cpu-µs/op), which does not grow when
// other processes load the machine.
//
//	go test -run '^$' -bench . -benchtime 20x ./redisstore/

// denseEmbedder gives every text a deterministic pseudo-random Gaussian
// vector, dense like a real model's (the hashing embedder's are sparse).
type denseEmbedder struct{ dims int }

func (d denseEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		_, _ = h.Write([]byte(t))
		rng := rand.New(rand.NewPCG(h.Sum64(), 1))
		v := make([]float32, d.dims)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out, nil
}

func benchStore(b *testing.B, opts redisstore.Options) (*redisstore.Store, *redistest.BenchMeter) {
	b.Helper()
	rdb := redistest.Real(b)
	ctr := redistest.NewBenchMeter(rdb)
	s := newStore(b, rdb, opts)
	if err := s.LoadScripts(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { clearStore(b, s) })
	return s, ctr
}

// clearStore deletes every item of s, a page of namespaces at a time.
func clearStore(b *testing.B, s *redisstore.Store) {
	ctx := context.Background()
	for {
		items, err := s.Search(ctx, nil, redisstore.SearchOptions{Limit: redisstore.MaxSearchLimit})
		if err != nil || len(items) == 0 {
			return
		}
		ops := make([]redisstore.Op, len(items))
		for i, it := range items {
			ops[i] = redisstore.DeleteOp{Namespace: it.Namespace, Key: it.Key}
		}
		if _, err := s.Batch(ctx, ops); err != nil {
			b.Fatal(err)
		}
	}
}

// fill puts n items under ("users", "u<i%users>", "memories") in batches of
// 500.
func fill(b *testing.B, s *redisstore.Store, n, users int) {
	b.Helper()
	ctx := context.Background()
	for from := 0; from < n; from += 500 {
		var ops []redisstore.Op
		for i := from; i < min(from+500, n); i++ {
			ops = append(ops, redisstore.PutOp{
				Namespace: []string{"users", fmt.Sprint("u", i%users), "memories"},
				Key:       fmt.Sprint("m", i),
				Value:     map[string]any{"text": fmt.Sprintf("memory %d about topic %d", i, i%37), "kind": []string{"fact", "preference", "instruction"}[i%3], "i": i},
			})
		}
		if _, err := s.Batch(ctx, ops); err != nil {
			b.Fatal(err)
		}
	}
}

var benchValue = map[string]any{"text": "The user prefers concise answers and metric units.", "kind": "preference", "confidence": 0.9}

func BenchmarkPut(b *testing.B) {
	s, ctr := benchStore(b, redisstore.Options{})
	ctx := context.Background()
	ctr.Reset()
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		i++
		if err := s.Put(ctx, []string{"users", "u1", "memories"}, fmt.Sprint("m", i%1000), benchValue); err != nil {
			b.Fatal(err)
		}
	}
	ctr.Report(b)
}

// BenchmarkPutEmbedded384 includes the local embedding of the value (the
// hashing embedder) and the quantization of its vector.
func BenchmarkPutEmbedded384(b *testing.B) {
	emb, _ := embed.NewHashing(384)
	s, ctr := benchStore(b, redisstore.Options{Embedder: emb, Dims: 384, Fields: []string{"text"}})
	ctx := context.Background()
	ctr.Reset()
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		i++
		if err := s.Put(ctx, []string{"users", "u1", "memories"}, fmt.Sprint("m", i%1000), benchValue); err != nil {
			b.Fatal(err)
		}
	}
	ctr.Report(b)
}

func BenchmarkGet(b *testing.B) {
	s, ctr := benchStore(b, redisstore.Options{})
	ctx := context.Background()
	if err := s.Put(ctx, []string{"users", "u1", "memories"}, "m", benchValue); err != nil {
		b.Fatal(err)
	}
	ctr.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Get(ctx, []string{"users", "u1", "memories"}, "m"); err != nil {
			b.Fatal(err)
		}
	}
	ctr.Report(b)
}

// BenchmarkSearch: newest 10 of one user's 1000 memories.
func BenchmarkSearch(b *testing.B) {
	s, ctr := benchStore(b, redisstore.Options{})
	fill(b, s, 1000, 1)
	ctx := context.Background()
	ctr.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		items, err := s.Search(ctx, []string{"users", "u0"}, redisstore.SearchOptions{})
		if err != nil || len(items) != 10 {
			b.Fatal(len(items), err)
		}
	}
	ctr.Report(b)
}

// BenchmarkSearchFilter: page 3 of the "preference" memories among 1000
// items spread over 10 users, merged newest first.
func BenchmarkSearchFilter(b *testing.B) {
	s, ctr := benchStore(b, redisstore.Options{})
	fill(b, s, 1000, 10)
	ctx := context.Background()
	ctr.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		items, err := s.Search(ctx, []string{"users"}, redisstore.SearchOptions{Filter: map[string]any{"kind": "preference"}, Offset: 20})
		if err != nil || len(items) != 10 {
			b.Fatal(len(items), err)
		}
	}
	ctr.Report(b)
}

func benchQuery(b *testing.B, n, dims int, filter map[string]any) {
	s, ctr := benchStore(b, redisstore.Options{Embedder: denseEmbedder{dims}, Dims: dims, Fields: []string{"text"}})
	fill(b, s, n, 100)
	ctx := context.Background()
	ctr.Reset()
	q := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		q++
		items, err := s.Search(ctx, []string{"users"}, redisstore.SearchOptions{Query: fmt.Sprint("query ", q), Filter: filter})
		if err != nil || len(items) != 10 {
			b.Fatal(len(items), err)
		}
	}
	ctr.Report(b)
}

// The semantic search of the issue: 10k items of 384 dimensions under one
// prefix (100 namespaces), top 10 by exact cosine, ranked in Redis.
func BenchmarkSearchQuery10kx384(b *testing.B) { benchQuery(b, 10000, 384, nil) }

func BenchmarkSearchQuery10kx384Filter(b *testing.B) {
	benchQuery(b, 10000, 384, map[string]any{"kind": "preference"})
}

func BenchmarkSearchQuery1kx384(b *testing.B) { benchQuery(b, 1000, 384, nil) }

func BenchmarkSearchQuery1kx1536(b *testing.B) { benchQuery(b, 1000, 1536, nil) }
