package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
)

// BenchmarkQueryScale is the query search of issue 13 at size: n items of
// d dimensions, one per namespace ("users", "u<i>", "memories"), top 10 by
// exact cosine over the whole store. Each run reports the median latency
// (p50-ms), the worst time Redis blocked other clients (worst-slowlog-ms,
// from SLOWLOG, and worst-ping-ms, a PING loop on its own connection), the
// median time of a brute-force scan of the same float32 vectors in Go
// (brute-ms, the floor of an exact search) and p50 over it (x-brute).
// Opt-in, real Redis only:
//
//	go test -run '^$' -bench QueryScale -benchtime 5x -timeout 60m ./redisstore/
func BenchmarkQueryScale(b *testing.B) {
	for _, n := range []int{10000, 50000, 100000} {
		for _, d := range []int{384, 1536} {
			b.Run(fmt.Sprintf("%dk_x_%d", n/1000, d), func(b *testing.B) { benchQueryScale(b, n, d) })
		}
	}
}

func benchQueryScale(b *testing.B, n, dims int) {
	rdb := redistest.Real(b)
	ctx := context.Background()
	emb := denseEmbedder{dims}
	s := newStore(b, rdb, redisstore.Options{Embedder: emb, Dims: dims, Fields: []string{"text"}})
	if err := s.LoadScripts(ctx); err != nil {
		b.Fatal(err)
	}
	vecs := make([][]float32, 0, n)
	for from := 0; from < n; from += 1000 {
		var ops []redisstore.Op
		var texts []string
		for i := from; i < min(from+1000, n); i++ {
			t := fmt.Sprintf("memory %d", i)
			texts = append(texts, t)
			ops = append(ops, redisstore.PutOp{Namespace: []string{"users", fmt.Sprint("u", i), "memories"}, Key: "m", Value: map[string]any{"text": t}})
		}
		if _, err := s.Batch(ctx, ops); err != nil {
			b.Fatal(err)
		}
		v, _ := emb.Embed(ctx, texts)
		vecs = append(vecs, v...)
	}
	b.Cleanup(func() {
		for from := 0; from < n; from += 1000 {
			var ops []redisstore.Op
			for i := from; i < min(from+1000, n); i++ {
				ops = append(ops, redisstore.DeleteOp{Namespace: []string{"users", fmt.Sprint("u", i), "memories"}, Key: "m"})
			}
			if _, err := s.Batch(context.Background(), ops); err != nil {
				b.Error(err)
				return
			}
		}
	})
	m := redistest.NewBlockMeter(b, rdb, redistest.BlockMeterOptions{})
	var lat, brute []time.Duration
	var worstPing, worstSlow time.Duration
	q := 0
	for i := 0; i < b.N; i++ {
		q++
		query := fmt.Sprint("query ", q)
		m.Reset(b)
		start := time.Now()
		got, err := s.Search(ctx, nil, redisstore.SearchOptions{Query: query, Limit: 10})
		lat = append(lat, time.Since(start))
		ping, slow, cmd := m.Read(b)
		if slow > worstSlow {
			b.Logf("worst SLOWLOG so far: %v (%s)", slow, cmd)
		}
		worstPing, worstSlow = max(worstPing, ping), max(worstSlow, slow)
		if err != nil || len(got) != 10 {
			b.Fatal(len(got), err)
		}
		b.StopTimer()
		qv, _ := emb.Embed(ctx, []string{query})
		start = time.Now()
		top := bruteTop10(vecs, qv[0])
		brute = append(brute, time.Since(start))
		if got[0].Namespace[1] != fmt.Sprint("u", top) {
			b.Fatalf("top item %q, brute force u%d", got[0].Namespace, top)
		}
		b.StartTimer()
	}
	p50, bp50 := median(lat), median(brute)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(worstSlow), "worst-slowlog-ms")
	b.ReportMetric(ms(worstPing), "worst-ping-ms")
	b.ReportMetric(ms(bp50), "brute-ms")
	b.ReportMetric(float64(p50)/float64(bp50), "x-brute")
}

// bruteTop10 scans every vector with Cosine and returns the index of the
// best (it keeps the top 10 as a search would).
func bruteTop10(vecs [][]float32, q []float32) int {
	type sc struct {
		i int
		s float64
	}
	top := make([]sc, 0, 11)
	for i, v := range vecs {
		s := redisstore.Cosine(v, q)
		if len(top) == 10 && s <= top[9].s {
			continue
		}
		top = append(top, sc{i, s})
		slices.SortFunc(top, func(a, b sc) int { return -cmpF(a.s, b.s) })
		if len(top) > 10 {
			top = top[:10]
		}
	}
	return top[0].i
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
