package redisstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/keys"
	"github.com/redis/go-redis/v9"
)

type tableEmbedder map[string][]float32

func (m tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = m[t]
	}
	return out, nil
}

// The server's pruning must stay exact for any honest bound, not only for
// the tight ones quantize produces: here every item's int8 vector is
// replaced by the quantization of a perturbed copy, with its residual
// recomputed against the true vector. Approximate scores are then far off,
// and only the bounds keep the top k exact.
func checkLooseBounds(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	const dims, items = 24, 150
	rng := rand.New(rand.NewPCG(3, 4))
	table := tableEmbedder{}
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	prefix := redistest.Prefix(t)
	s, err := New(rdb, Options{Prefix: prefix, Embedder: table, Dims: dims, Fields: []string{"t"}})
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for i := range items {
		text := fmt.Sprint("text ", i)
		table[text] = vec()
		if i%10 == 0 && i > 0 {
			table[text] = table["text 0"] // exact ties
		}
		ops = append(ops, PutOp{Namespace: []string{"l", fmt.Sprint(i % 3)}, Key: fmt.Sprint("k", i), Value: map[string]any{"t": text, "i": i}})
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := range items {
			_ = s.Delete(context.Background(), []string{"l", fmt.Sprint(i % 3)}, fmt.Sprint("k", i))
		}
	})
	// The perturbation leans along dir, the first query, by ±amp: along that
	// query the approximate scores are off by about their whole bound, some
	// up and some down, which is what the bounds must absorb.
	dir := vec()
	table["query 0"] = dir
	nd := norm64(dir)
	for i := range items {
		x := table[fmt.Sprint("text ", i)]
		nx := norm64(x)
		noisy := make([]float32, dims)
		amp := 0.1 + rng.Float64()*0.4
		if rng.IntN(2) == 0 {
			amp = -amp
		}
		for d := range noisy {
			noisy[d] = float32(float64(x[d])/nx + amp*float64(dir[d])/nd + rng.NormFloat64()*0.02)
		}
		q := make([]byte, stride(dims))
		inv, _ := quantize(noisy, q)
		var res float64
		for d := range x {
			diff := float64(x[d])/nx - float64(int(q[d])-128)*inv
			res += diff * diff
		}
		key := "{" + prefix + "}:i:l:" + fmt.Sprint(i%3) + ":" + keys.Encode(fmt.Sprint("k", i))
		s := strconv.FormatFloat(inv, 'g', -1, 64) + " " + strconv.FormatFloat(math.Sqrt(res), 'g', -1, 64)
		if err := rdb.HSet(ctx, key, "q", q, "s", s).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for qi := range 8 {
		query := fmt.Sprint("query ", qi)
		switch qi {
		case 0: // dir
		case 1:
			table[query] = table["text 0"]
		default:
			table[query] = vec()
		}
		var brute []float64
		for i := range items {
			brute = append(brute, Cosine(table[query], table[fmt.Sprint("text ", i)]))
		}
		slices.SortFunc(brute, func(a, b float64) int { return -cmpFloat(a, b) })
		for _, page := range [][2]int{{0, 10}, {0, 1}, {7, 5}, {140, 20}} {
			got, err := s.Search(ctx, []string{"l"}, SearchOptions{Query: query, Offset: page[0], Limit: page[1]})
			if err != nil {
				t.Fatal(err)
			}
			want := brute[min(page[0], items):min(page[0]+page[1], items)]
			if len(got) != len(want) {
				t.Fatalf("%s %v: %d results, want %d", query, page, len(got), len(want))
			}
			for i, it := range got {
				if math.Abs(*it.Score-want[i]) > 1e-9 {
					t.Fatalf("%s %v: rank %d scores %v, brute force %v", query, page, page[0]+i, *it.Score, want[i])
				}
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestLooseBoundsMiniredis(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkLooseBounds(t, rdb)
}

func TestLooseBoundsRealRedis(t *testing.T) {
	checkLooseBounds(t, redistest.Real(t))
}
