package embed_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
)

var _ redisstore.Embedder = (*embed.Hashing)(nil)

func mustHashing(t *testing.T, dims int) *embed.Hashing {
	t.Helper()
	h, err := embed.NewHashing(dims)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestDeterministicUnitVectors(t *testing.T) {
	h := mustHashing(t, 64)
	texts := []string{"hello world", "Hello, WORLD!", "", "!!!", "日本語のテキスト", "a"}
	a, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mustHashing(t, 64).Embed(context.Background(), texts)
	for i := range texts {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("%q: two embedders disagree", texts[i])
		}
		if len(a[i]) != 64 {
			t.Fatalf("%q: %d dims", texts[i], len(a[i]))
		}
		var n float64
		for _, x := range a[i] {
			n += float64(x) * float64(x)
		}
		zero := texts[i] == "" || texts[i] == "!!!"
		if zero != (n == 0) || (!zero && math.Abs(n-1) > 1e-6) {
			t.Fatalf("%q: squared norm %v", texts[i], n)
		}
	}
	if !slices.Equal(a[0], a[1]) {
		t.Fatal("case and punctuation changed the vector")
	}
	// Pinned, so that a change of features or hash is noticed: the examples'
	// outputs depend on it.
	for i, x := range a[5] {
		want := 0.0
		switch i {
		case 25:
			want = 2 / math.Sqrt(5) // the word, weight 1
		case 57:
			want = 1 / math.Sqrt(5) // its one trigram, weight 1/2
		}
		if math.Abs(float64(x)-want) > 1e-6 {
			t.Fatalf(`vector of "a" changed at %d: %v`, i, a[5])
		}
	}
}

func TestSimilarity(t *testing.T) {
	h := mustHashing(t, 384)
	v, _ := h.Embed(context.Background(), []string{
		"the cat sat on the mat", "a cat on a mat", "stock markets fell sharply", "cats sitting", "这是中文", "这是中文吗",
	})
	if c1, c2 := redisstore.Cosine(v[0], v[1]), redisstore.Cosine(v[0], v[2]); c1 <= c2 || c1 < 0.3 {
		t.Fatalf("shared words %v, none %v", c1, c2)
	}
	if c := redisstore.Cosine(v[0], v[3]); c <= 0.05 {
		t.Fatalf("shared word pieces (cat/cats) score %v", c)
	}
	if c := redisstore.Cosine(v[4], v[5]); c < 0.3 {
		t.Fatalf("CJK texts sharing characters score %v", c)
	}
}

func TestWords(t *testing.T) {
	got := embed.Words("Héllo, wörld! 42 यह रूसी है x_y")
	want := []string{"héllo", "wörld", "42", "यह", "रूसी", "है", "x", "y"}
	if !slices.Equal(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	if _, err := embed.NewHashing(0); !errors.Is(err, embed.ErrDims) {
		t.Fatalf("NewHashing(0) = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mustHashing(t, 8).Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed on a canceled context = %v", err)
	}
}
