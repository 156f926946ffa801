package redisstore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// The client's score of stored bytes is the cosine of the vectors, the
// best of several, and refuses bytes of the wrong length.
func TestQueryScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{1, 3, 16, 384, 1536} {
		for range 50 {
			y := make([]float32, dims)
			for i := range y {
				y[i] = float32(rng.NormFloat64())
			}
			n := 1 + rng.IntN(3)
			vecs := make([][]float32, n)
			best := math.Inf(-1)
			for v := range vecs {
				vecs[v] = make([]float32, dims)
				for i := range vecs[v] {
					vecs[v][i] = float32(rng.NormFloat64() * 1e3)
				}
				best = max(best, Cosine(vecs[v], y))
			}
			p := packVectors(vecs, dims)
			if len(p.float) != n*dims*4 || binary.LittleEndian.Uint32(p.float) != math.Float32bits(vecs[0][0]) {
				t.Fatalf("packVectors: %d bytes", len(p.float))
			}
			got, ok := newQuery(y).score(n, string(p.float))
			if !ok || math.Abs(got-best) > 1e-12 {
				t.Fatalf("dims %d: score %v %v, want %v", dims, got, ok, best)
			}
			if _, ok := newQuery(y).score(n+1, string(p.float)); ok {
				t.Fatal("a wrong vector count scored")
			}
			if _, ok := newQuery(y).score(n, string(p.float[1:])); ok {
				t.Fatal("truncated vectors scored")
			}
		}
	}
	zero := packVectors([][]float32{{0, 0}}, 2)
	if s, ok := newQuery([]float32{1, 2}).score(1, string(zero.float)); !ok || s != 0 {
		t.Fatalf("zero vector: %v %v", s, ok)
	}
	if s, ok := newQuery([]float32{0, 0}).score(1, string(packVectors([][]float32{{1, 2}}, 2).float)); !ok || s != 0 {
		t.Fatalf("zero query: %v %v", s, ok)
	}
}

func TestCosine(t *testing.T) {
	if c := Cosine([]float32{1, 0}, []float32{0, 1}); c != 0 {
		t.Fatal(c)
	}
	if c := Cosine([]float32{1, 1}, []float32{2, 2}); math.Abs(c-1) > 1e-15 {
		t.Fatal(c)
	}
	if c := Cosine([]float32{1}, []float32{1, 2}); c != 0 {
		t.Fatal(c)
	}
	if c := Cosine([]float32{0, 0}, []float32{1, 2}); c != 0 {
		t.Fatal(c)
	}
}
