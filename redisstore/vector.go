package redisstore

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// Vectors are stored beside the item in three fields, so that Lua can rank
// them without decoding floats (it has no struct library everywhere):
//
//   - "q": per vector, the unit vector x/|x| quantized to int8 with its own
//     scale (the largest component becomes ±127), each byte the int8 plus
//     128, padded with 128 (zero) to a multiple of 16 bytes;
//   - "s": per vector, "1/scale residual", where residual is the Euclidean
//     norm of x/|x| minus its quantized form: for a unit query y, the exact
//     cosine lies within ±residual of the int8 dot product times 1/scale
//     (Cauchy-Schwarz), which is what lets the server rank exactly;
//   - "w": the vectors as given, float32 little-endian, for the exact
//     cosine of the candidates.

// stride is the number of bytes of one quantized vector of d dimensions.
func stride(d int) int { return (d + 15) / 16 * 16 }

type packedVectors struct {
	n     int
	q     []byte
	s     string
	float []byte
}

func packVectors(vecs [][]float32, dims int) packedVectors {
	st := stride(dims)
	p := packedVectors{n: len(vecs), q: make([]byte, len(vecs)*st), float: make([]byte, 0, len(vecs)*dims*4)}
	var scales strings.Builder
	for i, v := range vecs {
		inv, res := quantize(v, p.q[i*st:(i+1)*st])
		if i > 0 {
			scales.WriteByte(' ')
		}
		scales.WriteString(strconv.FormatFloat(inv, 'g', -1, 64))
		scales.WriteByte(' ')
		scales.WriteString(strconv.FormatFloat(res, 'g', -1, 64))
		for _, x := range v {
			p.float = binary.LittleEndian.AppendUint32(p.float, math.Float32bits(x))
		}
	}
	p.s = scales.String()
	return p
}

// quantize writes the int8 form of x/|x| (each plus 128) into q, padded with
// 128, and returns 1/scale and the norm of the quantization residual. A zero
// vector quantizes to zeros with 1/scale 0 and residual 0: its cosine with
// anything is taken to be 0.
func quantize(x []float32, q []byte) (inv, residual float64) {
	for i := range q {
		q[i] = 128
	}
	norm := norm64(x)
	if norm == 0 {
		return 0, 0
	}
	peak := 0.0
	for _, c := range x {
		peak = math.Max(peak, math.Abs(float64(c)/norm))
	}
	inv = peak / 127
	var sum float64
	for i, c := range x {
		u := float64(c) / norm
		k := math.Max(-127, math.Min(127, math.Round(u/inv)))
		q[i] = byte(int(k) + 128)
		d := u - k*inv
		sum += d * d
	}
	return inv, math.Sqrt(sum)
}

func norm64(x []float32) float64 {
	var sum float64
	for _, c := range x {
		sum += float64(c) * float64(c)
	}
	return math.Sqrt(sum)
}

// queryArgs returns the script arguments of a query vector: its dimensions,
// "1" if it is zero, and its components scaled to unit length, each in the
// shortest decimal that reads back as the same float64.
func queryArgs(y []float32) []any {
	args := make([]any, 0, len(y)+2)
	norm := norm64(y)
	zero := "0"
	if norm == 0 {
		zero = "1"
	}
	args = append(args, len(y), zero)
	for _, c := range y {
		u := 0.0
		if norm > 0 {
			u = float64(c) / norm
		}
		args = append(args, strconv.FormatFloat(u, 'g', -1, 64))
	}
	return args
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
