package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
)

var vectorCases = []testCase{
	{"insert_with_auto_embedding", vecInsert},
	{"update_with_embedding", vecUpdate},
	{"search_with_filters", vecFilters},
	{"search_pagination", vecPagination},
	{"search_edge_cases", vecEdgeCases},
	{"embed_with_path", vecEmbedWithPath},
	{"embed_with_path_operation_config", vecOperationConfig},
	{"scores", vecScores},
	{"non_ascii", vecNonASCII},
	{"json_paths", vecJSONPaths},
	{"no_embedder", vecNoEmbedder},
	{"embedder_errors", vecEmbedderErrors},
	{"ties_rank_newest_first", vecTies},
	{"exact_top_k", vecExactTopK},
}

const kitDims = 512

func hashing(t *testing.T) *embed.Hashing {
	t.Helper()
	h, err := embed.NewHashing(kitDims)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func vectorStore(t *testing.T, e Env, fields ...string) *redisstore.Store {
	t.Helper()
	o := redisstore.Options{Embedder: hashing(t), Dims: kitDims}
	if fields != nil {
		o.Fields = fields
	}
	return e.New(t, o)
}

// test_vector_insert_with_auto_embedding.
func vecInsert(t *testing.T, e Env) {
	s := vectorStore(t, e)
	docs := []struct {
		k string
		v map[string]any
	}{
		{"doc1", v("text", "short text")},
		{"doc2", v("text", "longer text document")},
		{"doc3", v("text", "longest text document here")},
		{"doc4", v("description", "text in description field")},
		{"doc5", v("content", "text in content field")},
		{"doc6", v("body", "text in body field")},
	}
	for _, d := range docs {
		put(t, s, ns{"test"}, d.k, d.v)
	}
	got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "long text"})
	if len(got) == 0 {
		t.Fatal("no results")
	}
	if !slices.Contains(keysOf(got), "doc2") || !slices.Contains(keysOf(got), "doc3") {
		t.Fatalf("doc2 and doc3 missing from %q", keysOf(got))
	}
	for i, it := range got {
		if i > 0 && score(t, it) > score(t, got[i-1]) {
			t.Fatalf("scores out of order: %v", got)
		}
	}
}

// test_vector_update_with_embedding.
func vecUpdate(t *testing.T, e Env) {
	s := vectorStore(t, e)
	put(t, s, ns{"test"}, "doc1", v("text", "zany zebra Xerxes"))
	put(t, s, ns{"test"}, "doc2", v("text", "something about dogs"))
	put(t, s, ns{"test"}, "doc3", v("text", "text about birds"))
	initial := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "Zany Xerxes"})
	if len(initial) == 0 || initial[0].Key != "doc1" {
		t.Fatalf("initial: %q", keysOf(initial))
	}
	initialScore := score(t, initial[0])

	put(t, s, ns{"test"}, "doc1", v("text", "new text about dogs"))
	after := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "Zany Xerxes"})
	afterScore := 0.0
	for _, it := range after {
		if it.Key == "doc1" {
			afterScore = score(t, it)
		}
	}
	if afterScore >= initialScore {
		t.Fatalf("score after the update %v, before %v", afterScore, initialScore)
	}
	for _, it := range search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "new text about dogs"}) {
		if it.Key == "doc1" && score(t, it) <= afterScore {
			t.Fatalf("doc1 scores %v for its own text", score(t, it))
		}
	}
	// Don't index this one.
	put(t, s, ns{"test"}, "doc4", v("text", "new text about dogs"), redisstore.NoIndex())
	got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "new text about dogs", Limit: 3})
	if slices.Contains(keysOf(got), "doc4") {
		t.Fatal("unindexed doc4 found by a query")
	}
	// Nor with a larger page: items without vectors are left out.
	if got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "dogs", Limit: 10}); slices.Contains(keysOf(got), "doc4") {
		t.Fatal("unindexed doc4 found by a query")
	}
	// Re-putting an indexed item with NoIndex drops its vectors.
	put(t, s, ns{"test"}, "doc2", v("text", "something about dogs"), redisstore.NoIndex())
	if got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "something about dogs"}); slices.Contains(keysOf(got), "doc2") {
		t.Fatal("doc2 kept its vectors")
	}
	if get(t, s, ns{"test"}, "doc4") == nil {
		t.Fatal("doc4 is not stored")
	}
}

// test_vector_search_with_filters, with and without refresh.
func vecFilters(t *testing.T, e Env) {
	for _, refresh := range []redisstore.Refresh{redisstore.RefreshOn, redisstore.RefreshOff} {
		s := e.New(t, redisstore.Options{Embedder: hashing(t), Dims: kitDims, TTL: units(e, 100), RefreshOnRead: redisstore.RefreshOn})
		docs := []struct {
			k string
			v map[string]any
		}{
			{"doc1", v("text", "red apple", "color", "red", "score", 4.5)},
			{"doc2", v("text", "red car", "color", "red", "score", 3.0)},
			{"doc3", v("text", "green apple", "color", "green", "score", 4.0)},
			{"doc4", v("text", "blue car", "color", "blue", "score", 3.5)},
		}
		for _, d := range docs {
			put(t, s, ns{"test"}, d.k, d.v)
		}
		q := func(query string, f map[string]any) []redisstore.SearchItem {
			return search(t, s, ns{"test"}, redisstore.SearchOptions{Query: query, Filter: f, RefreshTTL: refresh})
		}
		got := q("apple", v("color", "red"))
		wantLen(t, "apple, red", got, 2)
		if got[0].Key != "doc1" {
			t.Fatalf("apple, red: %q", keysOf(got))
		}
		got = q("car", v("color", "red"))
		wantLen(t, "car, red", got, 2)
		if got[0].Key != "doc2" {
			t.Fatalf("car, red: %q", keysOf(got))
		}
		got = q("bbbbluuu", v("score", v("$gt", 3.2)))
		wantLen(t, "bbbbluuu, score > 3.2", got, 3)
		if got[0].Key != "doc4" {
			t.Fatalf("bbbbluuu: %q", keysOf(got))
		}
		wantKeys(t, "apple, score >= 4 and green", q("apple", v("score", v("$gte", 4.0), "color", "green")), "doc3")
	}
}

// test_vector_search_pagination.
func vecPagination(t *testing.T, e Env) {
	s := vectorStore(t, e)
	for i := range 5 {
		put(t, s, ns{"test"}, fmt.Sprint("doc", i), v("text", fmt.Sprint("test document number ", i)))
	}
	p1 := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "test", Limit: 2})
	p2 := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "test", Limit: 2, Offset: 2})
	wantLen(t, "page 1", p1, 2)
	wantLen(t, "page 2", p2, 2)
	if p1[0].Key == p2[0].Key {
		t.Fatal("pages overlap")
	}
	all := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "test", Limit: 10})
	wantLen(t, "all", all, 5)
	wantKeys(t, "pages are slices of the whole", append(p1, p2...), keysOf(all[:4])...)
}

// test_vector_search_edge_cases.
func vecEdgeCases(t *testing.T, e Env) {
	s := vectorStore(t, e)
	put(t, s, ns{"test"}, "doc1", v("text", "test document"))
	wantLen(t, "empty query", search(t, s, ns{"test"}, redisstore.SearchOptions{Query: ""}), 1)
	long := ""
	for range 100 {
		long += "test "
	}
	wantLen(t, "long query", search(t, s, ns{"test"}, redisstore.SearchOptions{Query: long}), 1)
	wantLen(t, "special characters", search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "test!@#$%^&*()"}), 1)
	// A query without words embeds to the zero vector: every score is 0.
	got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "!@#$%^&*()"})
	wantLen(t, "punctuation only", got, 1)
	if score(t, got[0]) != 0 {
		t.Fatalf("zero query scored %v", score(t, got[0]))
	}
	if got := search(t, s, ns{"test"}, redisstore.SearchOptions{}); got[0].Score != nil {
		t.Fatal("a search without a query has a score")
	}
}

// test_embed_with_path_sync.
func vecEmbedWithPath(t *testing.T, e Env) {
	s := vectorStore(t, e, "key0", "key1", "key3")
	put(t, s, ns{"test"}, "doc1", v("key1", "xxx", "key2", "yyy", "key3", "zzz"))
	put(t, s, ns{"test"}, "doc2", v("key0", "uuu", "key1", "vvv", "key2", "www", "key3", "xxx"))
	got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "xxx"})
	wantLen(t, "xxx", got, 2)
	a, b := score(t, got[0]), score(t, got[1])
	if got[0].Key == got[1].Key || math.Abs(a-b) > 1e-3 {
		t.Fatalf("xxx: %q %v %v", keysOf(got), a, b)
	}
	got = search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "uuu"})
	if len(got) != 2 || got[0].Key != "doc2" || score(t, got[0]) <= score(t, got[1]) || math.Abs(a-score(t, got[0])) > 1e-3 {
		t.Fatalf("uuu: %q", keysOf(got))
	}
	got = search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "zzz"})
	if len(got) != 2 || got[0].Key != "doc1" || score(t, got[0]) <= score(t, got[1]) || math.Abs(a-score(t, got[0])) > 1e-3 {
		t.Fatalf("zzz: %q", keysOf(got))
	}
	got = search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "www"})
	if len(got) != 2 || score(t, got[0]) >= a || score(t, got[1]) >= a {
		t.Fatalf("www (not indexed): %q", keysOf(got))
	}
}

// test_embed_with_path_operation_config.
func vecOperationConfig(t *testing.T, e Env) {
	s := vectorStore(t, e, "key17")
	put(t, s, ns{"test"}, "doc3", v("key0", "aaa", "key1", "bbb", "key2", "ccc", "key3", "ddd"), redisstore.WithIndex("key0", "key1"))
	put(t, s, ns{"test"}, "doc4", v("key0", "eee", "key1", "bbb", "key2", "fff", "key3", "ggg"), redisstore.WithIndex("key1", "key3"))
	got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "aaa"})
	if len(got) != 2 || got[0].Key != "doc3" || score(t, got[0]) <= score(t, got[1]) {
		t.Fatalf("aaa: %q", keysOf(got))
	}
	got = search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "ggg"})
	if len(got) != 2 || got[0].Key != "doc4" || score(t, got[0]) <= score(t, got[1]) {
		t.Fatalf("ggg: %q", keysOf(got))
	}
	got = search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "bbb"})
	if len(got) != 2 || got[0].Key == got[1].Key || math.Abs(score(t, got[0])-score(t, got[1])) > 1e-3 {
		t.Fatalf("bbb: %q", keysOf(got))
	}
	for _, it := range search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "ccc"}) {
		if score(t, it) >= 0.9 {
			t.Fatalf("ccc (not indexed) scores %v on %s", score(t, it), it.Key)
		}
	}
	put(t, s, ns{"test"}, "doc5", v("key0", "hhh", "key1", "iii"), redisstore.NoIndex())
	all := search(t, s, ns{"test"}, redisstore.SearchOptions{})
	wantLen(t, "no query", all, 3)
	if !slices.Contains(keysOf(all), "doc5") {
		t.Fatal("doc5 missing without a query")
	}
	if got := search(t, s, ns{"test"}, redisstore.SearchOptions{Query: "hhh"}); slices.Contains(keysOf(got), "doc5") {
		t.Fatal("doc5 (NoIndex) found by a query")
	}
}

// test_scores: the score is the cosine of the query's and the text's vectors.
func vecScores(t *testing.T, e Env) {
	emb := hashing(t)
	for _, query := range []string{"aaa", "bbb", "ccc", "abcd", "poisson", "aaa bbb"} {
		s := vectorStore(t, e, "key0")
		put(t, s, ns{"test"}, "doc", v("key0", "aaa"), redisstore.WithIndex("key0", "key1"))
		got := search(t, s, nil, redisstore.SearchOptions{Query: query})
		wantLen(t, query, got, 1)
		vecs, err := emb.Embed(testctx.Context(t), []string{"aaa", query})
		if err != nil {
			t.Fatal(err)
		}
		want := redisstore.Cosine(vecs[1], vecs[0])
		if math.Abs(score(t, got[0])-want) > 1e-9 {
			t.Fatalf("%s: score %v, want %v", query, score(t, got[0]), want)
		}
	}
}

// test_non_ascii.
func vecNonASCII(t *testing.T, e Env) {
	s := vectorStore(t, e)
	texts := []string{"这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"}
	for i, text := range texts {
		put(t, s, ns{"user_123", "memories"}, fmt.Sprint(i+1), v("text", text))
	}
	for i, text := range texts {
		got := search(t, s, ns{"user_123", "memories"}, redisstore.SearchOptions{Query: text})
		if len(got) == 0 || got[0].Key != fmt.Sprint(i+1) {
			t.Fatalf("%s: %q", text, keysOf(got))
		}
	}
}

// Field paths: nested fields, list elements, wildcards and multi-field
// selections each give their own vectors.
func vecJSONPaths(t *testing.T, e Env) {
	s := vectorStore(t, e, "profile.bio", "turns[*].text", "tags[-1]")
	put(t, s, ns{"p"}, "a", v("profile", v("bio", "loves alpine climbing"), "turns", []any{v("text", "hello there"), v("text", "weather talk")}, "tags", []any{"x", "marmalade"}))
	put(t, s, ns{"p"}, "b", v("profile", v("bio", "ocean sailing fan"), "turns", []any{v("text", "nothing much")}, "tags", []any{"toast"}))
	for q, want := range map[string]string{"alpine climbing": "a", "weather talk": "a", "marmalade": "a", "ocean sailing": "b", "nothing much": "b", "toast": "b"} {
		got := search(t, s, ns{"p"}, redisstore.SearchOptions{Query: q, Limit: 1})
		if len(got) != 1 || got[0].Key != want || score(t, got[0]) < 0.5 {
			t.Fatalf("%q: %q, want %s", q, keysOf(got), want)
		}
	}
	put(t, s, ns{"p"}, "c", v("a", v("x", "kiwi fruit", "y", "mango")), redisstore.WithIndex("a.{x,y}"))
	if got := search(t, s, ns{"p"}, redisstore.SearchOptions{Query: "mango", Limit: 1}); len(got) != 1 || got[0].Key != "c" {
		t.Fatalf("mango: %q", keysOf(got))
	}
	put(t, s, ns{"p"}, "d", v("m", v("k1", "papaya", "k2", "guava")), redisstore.WithIndex("m.*"))
	if got := search(t, s, ns{"p"}, redisstore.SearchOptions{Query: "guava", Limit: 1}); len(got) != 1 || got[0].Key != "d" {
		t.Fatalf("guava: %q", keysOf(got))
	}
	wantErr(t, "bad path", s.Put(testctx.Context(t), ns{"p"}, "e", v(), redisstore.WithIndex("a[")), redisstore.ErrInvalidArgument)
	_, err := redisstore.New(context.Background(), nil, redisstore.Options{})
	wantErr(t, "nil client", err, redisstore.ErrInvalidOptions)
}

func vecNoEmbedder(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"n"}, "k", v("text", "hello"), redisstore.WithIndex("text"))
	put(t, s, ns{"n"}, "k2", v("text", "bye", "kind", "x"))
	// LangGraph ignores the query: the plain search, newest first, no scores.
	got := search(t, s, ns{"n"}, redisstore.SearchOptions{Query: "hello"})
	wantKeys(t, "query without an embedder", got, "k2", "k")
	for _, it := range got {
		if it.Score != nil {
			t.Fatalf("%s has a score without an embedder", it.Key)
		}
	}
	got = search(t, s, ns{"n"}, redisstore.SearchOptions{Query: "hello", Filter: v("kind", "x"), Limit: 1})
	wantKeys(t, "query, filter and limit without an embedder", got, "k2")
	wantLen(t, "no query", search(t, s, ns{"n"}, redisstore.SearchOptions{}), 2)
}

type funcEmbedder func(ctx context.Context, texts []string) ([][]float32, error)

func (f funcEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

func vecEmbedderErrors(t *testing.T, e Env) {
	boom := errors.New("model unavailable")
	cases := map[string]funcEmbedder{
		"error": func(context.Context, []string) ([][]float32, error) { return nil, boom },
		"count": func(_ context.Context, texts []string) ([][]float32, error) {
			return make([][]float32, len(texts)+1), nil
		},
		"dims": func(_ context.Context, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = make([]float32, 3)
			}
			return out, nil
		},
		"nan": func(_ context.Context, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = []float32{1, float32(math.NaN()), 0, 0}
			}
			return out, nil
		},
	}
	for name, emb := range cases {
		s := e.New(t, redisstore.Options{Embedder: emb, Dims: 4})
		err := s.Put(testctx.Context(t), ns{"x"}, "k", v("text", "hi"))
		wantErr(t, name+": put", err, redisstore.ErrEmbedding)
		_, err = s.Search(testctx.Context(t), ns{"x"}, redisstore.SearchOptions{Query: "hi"})
		wantErr(t, name+": search", err, redisstore.ErrEmbedding)
		if name == "error" && !errors.Is(err, boom) {
			t.Fatalf("the embedder's error is not wrapped: %v", err)
		}
		wantLen(t, name+": nothing written", search(t, s, nil, redisstore.SearchOptions{}), 0)
	}
}
