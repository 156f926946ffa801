// Package embed holds Hashing, a deterministic local text embedder for
// tests, examples and offline use of redisstore's semantic search: no
// network, no model, the same vector for the same text on every machine.
//
// It embeds by the hashing trick: the words of a text and the character
// trigrams of each word are hashed (64-bit FNV-1a) into a fixed number of
// dimensions, each with a sign from the hash, and the sum is scaled to unit
// length. Texts that share words or word pieces score a high cosine; it
// knows nothing of synonyms or meaning ("car" and "automobile" are
// unrelated to it). Use a real embedding model in production.
package embed

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Hashing is a deterministic Embedder of a fixed number of dimensions. It
// satisfies redisstore.Embedder and is safe for concurrent use.
type Hashing struct {
	dims int
}

// Weights of the features: whole words count more than their trigrams, so
// that a shared word outweighs a shared word piece.
const (
	wordWeight    = 1.0
	trigramWeight = 0.5
)

// ErrDims is returned by NewHashing for a dimension below 1.
var ErrDims = errors.New("embed: dimensions must be at least 1")

// NewHashing returns a Hashing embedder of dims dimensions.
func NewHashing(dims int) (*Hashing, error) {
	if dims < 1 {
		return nil, ErrDims
	}
	return &Hashing{dims: dims}, nil
}

// Dims returns the length of the vectors.
func (h *Hashing) Dims() int { return h.dims }

// Embed returns one unit vector per text (a zero vector for a text without
// letters or digits). It only fails when ctx is done.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.vector(t)
	}
	return out, nil
}

func (h *Hashing) vector(text string) []float32 {
	acc := make([]float64, h.dims)
	for _, word := range Words(text) {
		h.add(acc, "w\x00"+word, wordWeight)
		runes := []rune("\x02" + word + "\x03") // word boundaries
		for i := 0; i+3 <= len(runes); i++ {
			h.add(acc, "t\x00"+string(runes[i:i+3]), trigramWeight)
		}
	}
	var sum float64
	for _, x := range acc {
		sum += x * x
	}
	v := make([]float32, h.dims)
	if sum == 0 {
		return v
	}
	norm := math.Sqrt(sum)
	for i, x := range acc {
		v[i] = float32(x / norm)
	}
	return v
}

// add adds weight to the dimension of feature, with the sign of the hash's
// top bit.
func (h *Hashing) add(acc []float64, feature string, weight float64) {
	f := fnv.New64a()
	_, _ = f.Write([]byte(feature))
	sum := f.Sum64()
	if sum>>63 == 1 {
		weight = -weight
	}
	acc[(sum&(1<<63-1))%uint64(h.dims)] += weight
}

// Words splits text into lower-case runs of letters and digits, the words
// Hashing embeds.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r)
	})
}
