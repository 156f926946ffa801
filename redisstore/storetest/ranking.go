package storetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/redisstore"
)

// Items with equal scores come newest first.
func vecTies(t *testing.T, e Env) {
	s := vectorStore(t, e)
	for _, k := range []string{"old", "mid", "new"} {
		put(t, s, ns{"t", k}, k, v("text", "same words here"))
	}
	put(t, s, ns{"t", "x"}, "other", v("text", "different"))
	got := search(t, s, ns{"t"}, redisstore.SearchOptions{Query: "same words here"})
	wantKeys(t, "ties", got, "new", "mid", "old", "other")
	put(t, s, ns{"t", "old"}, "old", v("text", "same words here"))
	got = search(t, s, ns{"t"}, redisstore.SearchOptions{Query: "same words here", Limit: 2})
	wantKeys(t, "ties after an update", got, "old", "new")
}

// tableEmbedder returns the vector registered for each text.
type tableEmbedder map[string][]float32

func (m tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := m[t]
		if !ok {
			return nil, fmt.Errorf("no vector for %q", t)
		}
		out[i] = v
	}
	return out, nil
}

// The ranking is the exact top k by cosine, checked against brute force on
// vectors built to crowd the boundary: clusters of near-duplicates, exact
// duplicates, items with several vectors, zero vectors and opposite ones.
func vecExactTopK(t *testing.T, e Env) {
	const dims = 48
	rng := rand.New(rand.NewPCG(7, 11))
	table := tableEmbedder{}
	randVec := func(scale float64) []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * scale)
		}
		return v
	}
	centers := [][]float32{randVec(1), randVec(1), randVec(1)}
	near := func(c []float32, eps float64) []float32 {
		v := slices.Clone(c)
		for i := range v {
			v[i] += float32(rng.NormFloat64() * eps)
		}
		return v
	}
	type doc struct {
		n     ns
		key   string
		texts []string
		value map[string]any
	}
	var docs []doc
	for i := range 160 {
		var texts []string
		nv := 1 + i%3
		for j := range nv {
			text := fmt.Sprintf("t%d.%d", i, j)
			switch {
			case i%17 == 0:
				table[text] = make([]float32, dims) // zero vector
			case i%11 == 0:
				table[text] = slices.Clone(centers[0]) // exact duplicates
			case i%5 == 0:
				table[text] = near(centers[i%3], 1e-4)
			case i%7 == 0:
				c := slices.Clone(centers[1])
				for k := range c {
					c[k] = -c[k]
				}
				table[text] = near(c, 1e-3)
			default:
				table[text] = near(centers[i%3], 0.3+float64(j))
			}
			texts = append(texts, text)
		}
		docs = append(docs, doc{n: ns{"k", fmt.Sprint("g", i%4)}, key: fmt.Sprintf("d%03d", i), texts: texts, value: v("texts", texts, "i", i, "even", i%2 == 0)})
	}
	s := e.New(t, redisstore.Options{Embedder: table, Dims: dims, Fields: []string{"texts[*]"}})
	var ops []redisstore.Op
	for _, d := range docs {
		ops = append(ops, redisstore.PutOp{Namespace: d.n, Key: d.key, Value: d.value})
	}
	batch(t, s, ops...)

	queries := []string{"q-center0", "q-center1", "q-center2", "q-neg1", "q-rand1", "q-rand2"}
	table["q-center0"] = slices.Clone(centers[0])
	table["q-center1"] = near(centers[1], 1e-4)
	table["q-center2"] = near(centers[2], 0.05)
	neg := slices.Clone(centers[1])
	for k := range neg {
		neg[k] = -neg[k]
	}
	table["q-neg1"] = neg
	table["q-rand1"] = randVec(1)
	table["q-rand2"] = randVec(0.01)

	for _, q := range queries {
		for _, filter := range []map[string]any{nil, v("even", true), v("i", v("$lt", 40))} {
			type scored struct {
				key   string
				score float64
			}
			var brute []scored
			for _, d := range docs {
				if filter != nil {
					if even, ok := filter["even"]; ok && (d.value["i"].(int)%2 == 0) != even {
						continue
					}
					if _, ok := filter["i"]; ok && d.value["i"].(int) >= 40 {
						continue
					}
				}
				best := math.Inf(-1)
				for _, text := range d.texts {
					best = math.Max(best, redisstore.Cosine(table[q], table[text]))
				}
				brute = append(brute, scored{d.key, best})
			}
			slices.SortStableFunc(brute, func(a, b scored) int {
				switch {
				case a.score > b.score:
					return -1
				case a.score < b.score:
					return 1
				}
				return 0
			})
			byKey := map[string]float64{}
			for _, b := range brute {
				byKey[b.key] = b.score
			}
			for _, page := range [][2]int{{0, 10}, {0, 1}, {5, 7}, {30, 25}, {0, 200}} {
				off, lim := page[0], page[1]
				got := search(t, s, ns{"k"}, redisstore.SearchOptions{Query: q, Filter: filter, Offset: off, Limit: lim})
				end := min(off+lim, len(brute))
				want := brute[min(off, end):end]
				what := fmt.Sprintf("query %s, filter %v, offset %d, limit %d", q, filter, off, lim)
				wantLen(t, what, got, len(want))
				for i, it := range got {
					sc := score(t, it)
					if math.Abs(sc-byKey[it.Key]) > 1e-9 {
						t.Fatalf("%s: %s scored %v, brute force %v", what, it.Key, sc, byKey[it.Key])
					}
					if math.Abs(sc-want[i].score) > 1e-9 {
						t.Fatalf("%s: rank %d is %s at %v, brute force has %s at %v", what, off+i, it.Key, sc, want[i].key, want[i].score)
					}
				}
			}
		}
	}
}
