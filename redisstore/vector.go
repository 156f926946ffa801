package redisstore

import (
	"encoding/binary"
	"math"
)

// Vectors are stored beside the item, in its hash: "n" their number and
// "w" the vectors as given, float32 little-endian, one after the other.
// Search reads them in bounded steps and scores them in the client.

// packedVectors are an item's vectors in their stored form.
type packedVectors struct {
	n     int
	float []byte
}

func packVectors(vecs [][]float32, dims int) packedVectors {
	p := packedVectors{n: len(vecs), float: make([]byte, 0, len(vecs)*dims*4)}
	for _, v := range vecs {
		for _, x := range v {
			p.float = binary.LittleEndian.AppendUint32(p.float, math.Float32bits(x))
		}
	}
	return p
}

// query is a query vector scaled to unit length.
type query struct {
	unit []float64
	zero bool
}

func newQuery(y []float32) query {
	q := query{unit: make([]float64, len(y))}
	norm := norm64(y)
	q.zero = norm == 0
	for i, c := range y {
		if !q.zero {
			q.unit[i] = float64(c) / norm
		}
	}
	return q
}

// score returns the cosine similarity of the query to the best of n stored
// vectors (float32 little-endian in w), as Cosine computes it, and false
// when w does not hold n vectors of the query's dimensions (data the store
// did not write: the item is left out, as one without vectors is).
func (q query) score(n int, w string) (float64, bool) {
	d := len(q.unit)
	if n <= 0 || d == 0 || len(w) != n*d*4 {
		return 0, false
	}
	if q.zero {
		return 0, true
	}
	best := math.Inf(-1)
	for v := range n {
		row := w[v*d*4 : (v+1)*d*4]
		var dot, nx float64
		for i, y := range q.unit {
			o := 4 * i
			x := float64(math.Float32frombits(uint32(row[o]) | uint32(row[o+1])<<8 | uint32(row[o+2])<<16 | uint32(row[o+3])<<24))
			dot += x * y
			nx += x * x
		}
		s := 0.0
		if nx > 0 && !math.IsNaN(nx) && !math.IsInf(nx, 0) {
			s = dot / math.Sqrt(nx)
		}
		best = max(best, s)
	}
	return best, true
}

func norm64(x []float32) float64 {
	var sum float64
	for _, c := range x {
		sum += float64(c) * float64(c)
	}
	return math.Sqrt(sum)
}

// Cosine returns the cosine similarity of a and b, as Search scores it: 0
// when either is zero or their lengths differ.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	na, nb := norm64(a), norm64(b)
	if na == 0 || nb == 0 {
		return 0
	}
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot / (na * nb)
}
