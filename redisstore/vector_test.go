package redisstore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// approx computes what store_search.lua computes from the stored fields:
// the int8 dot product with the unit query times 1/scale.
func approx(q []byte, inv float64, y []float64) float64 {
	var acc, sumy float64
	for i, yi := range y {
		acc += float64(q[i]) * yi
		sumy += yi
	}
	return (acc - 128*sumy) * inv
}

// The bound the server relies on: |exact cosine - approx| <= residual.
func TestQuantizationBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{1, 3, 16, 17, 384, 1536} {
		for range 200 {
			x := make([]float32, dims)
			y := make([]float32, dims)
			spiky := rng.IntN(4) == 0
			for i := range x {
				x[i] = float32(rng.NormFloat64())
				y[i] = float32(rng.NormFloat64())
				if spiky && i%7 == 0 {
					x[i] *= 50
				}
			}
			q := make([]byte, stride(dims))
			inv, res := quantize(x, q)
			for i := dims; i < len(q); i++ {
				if q[i] != 128 {
					t.Fatalf("padding byte %d is %d", i, q[i])
				}
			}
			ny := norm64(y)
			yn := make([]float64, dims)
			for i := range y {
				yn[i] = float64(y[i]) / ny
			}
			exact := Cosine(x, y)
			if d := math.Abs(exact - approx(q, inv, yn)); d > res+1e-12 {
				t.Fatalf("dims %d: |exact - approx| = %g > residual %g", dims, d, res)
			}
			// Rounding to the nearest step: each component is off by at
			// most half a step (1/scale).
			if limit := 0.5 * inv * math.Sqrt(float64(dims)); res > limit+1e-15 {
				t.Fatalf("dims %d: residual %g above half a step per component (%g)", dims, res, limit)
			}
		}
	}
}

func TestQuantizeZero(t *testing.T) {
	q := make([]byte, 16)
	inv, res := quantize(make([]float32, 5), q)
	if inv != 0 || res != 0 {
		t.Fatalf("zero vector: inv %v, residual %v", inv, res)
	}
	for _, b := range q {
		if b != 128 {
			t.Fatalf("zero vector quantized to %v", q)
		}
	}
}

func TestPackVectors(t *testing.T) {
	vecs := [][]float32{{1, 0, -1}, {0.5, 0.25, 0}}
	p := packVectors(vecs, 3)
	if p.n != 2 || len(p.q) != 32 || len(p.float) != 24 {
		t.Fatalf("packed: n %d, q %d bytes, float %d bytes", p.n, len(p.q), len(p.float))
	}
	if p.q[0] != 128+127 || p.q[1] != 128 || p.q[2] != 128-127 {
		t.Fatalf("first vector quantized to %v", p.q[:3])
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(p.float[20:])); got != 0 {
		t.Fatalf("last float %v", got)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(p.float[12:])); got != 0.5 {
		t.Fatalf("fourth float %v", got)
	}
	parts := strings.Fields(p.s)
	if len(parts) != 4 {
		t.Fatalf("scales %q", p.s)
	}
	for _, s := range parts {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("scale %q: %v", s, err)
		}
	}
}

func TestQueryArgs(t *testing.T) {
	args := queryArgs([]float32{3, 4})
	if args[0] != 2 || args[1] != "0" || args[2] != "0.6" || args[3] != "0.8" {
		t.Fatalf("queryArgs = %v", args)
	}
	if args := queryArgs([]float32{0, 0}); args[1] != "1" || args[2] != "0" {
		t.Fatalf("zero query args = %v", args)
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
