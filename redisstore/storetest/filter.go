package storetest

import (
	"fmt"
	"testing"

	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redisstore"
)

var filterCases = []testCase{
	{"operators", filterOperators},
	{"multiple_conditions", filterMultiple},
	{"dotted_paths", filterDotted},
	{"null_and_missing", filterNullMissing},
	{"deep_equality", filterDeepEquality},
	{"strings_compare_by_bytes", filterStrings},
	{"types_do_not_mix", filterTypes},
	{"before_paging", filterBeforePaging},
	{"invalid", filterInvalid},
}

func filterStore(t *testing.T, e Env) *redisstore.Store {
	s := store(t, e)
	docs := []struct {
		key   string
		value map[string]any
	}{
		{"doc1", v("text", "red apple", "color", "red", "score", 4.5, "n", 1)},
		{"doc2", v("text", "red car", "color", "red", "score", 3.0, "n", 2)},
		{"doc3", v("text", "green apple", "color", "green", "score", 4.0, "n", 3)},
		{"doc4", v("text", "blue car", "color", "blue", "score", 3.5, "n", 4)},
	}
	for _, d := range docs {
		put(t, s, ns{"test"}, d.key, d.value)
	}
	return s
}

func filtered(t *testing.T, s *redisstore.Store, f map[string]any) []redisstore.SearchItem {
	t.Helper()
	return search(t, s, ns{"test"}, redisstore.SearchOptions{Filter: f, Limit: 100})
}

func filterOperators(t *testing.T, e Env) {
	s := filterStore(t, e)
	cases := []struct {
		f    map[string]any
		want []string
	}{
		{v("color", "red"), []string{"doc1", "doc2"}},
		{v("color", v("$eq", "red")), []string{"doc1", "doc2"}},
		{v("color", v("$ne", "red")), []string{"doc3", "doc4"}},
		{v("score", v("$gt", 3.2)), []string{"doc1", "doc3", "doc4"}},
		{v("score", v("$gte", 4.0)), []string{"doc1", "doc3"}},
		{v("score", v("$gte", 4)), []string{"doc1", "doc3"}},
		{v("score", v("$lt", 3.5)), []string{"doc2"}},
		{v("score", v("$lte", 3.5)), []string{"doc2", "doc4"}},
		{v("score", 3), []string{"doc2"}}, // 3.0 equals 3
		{v("n", v("$gt", 1, "$lt", 4)), []string{"doc2", "doc3"}},
		{v("n", v("$gte", 5)), nil},
		{v("color", "purple"), nil},
	}
	for _, c := range cases {
		wantSameKeys(t, fmt.Sprint(c.f), filtered(t, s, c.f), c.want...)
	}
}

// test_vector_search_with_filters' "Multiple filters", without a query.
func filterMultiple(t *testing.T, e Env) {
	s := filterStore(t, e)
	wantSameKeys(t, "score >= 4 and green", filtered(t, s, v("score", v("$gte", 4.0), "color", "green")), "doc3")
	wantSameKeys(t, "red and n != 1", filtered(t, s, v("color", "red", "n", v("$ne", 1))), "doc2")
	wantSameKeys(t, "contradiction", filtered(t, s, v("color", "red", "n", 3)))
}

// test_inmemory_store_search_supports_dotted_filter_keys, and deeper.
func filterDotted(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"docs"}, "hyphen", v("user", v("access-level", "nested", "age", 30)))
	put(t, s, ns{"docs"}, "other", v("user", v("access-level", "top", "age", 40)))
	put(t, s, ns{"docs"}, "flat", v("user", "nested"))
	put(t, s, ns{"docs"}, "list", v("user", []any{v("access-level", "nested")}))
	got := search(t, s, ns{"docs"}, redisstore.SearchOptions{Filter: v("user.access-level", "nested")})
	wantKeys(t, "user.access-level", got, "hyphen")
	got = search(t, s, ns{"docs"}, redisstore.SearchOptions{Filter: v("user.age", v("$gte", 35))})
	wantKeys(t, "user.age >= 35", got, "other")
	got = search(t, s, ns{"docs"}, redisstore.SearchOptions{Filter: v("user.age.x", v("$ne", nil))})
	wantLen(t, "a path through a number", got, 0)
}

func filterNullMissing(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"n"}, "null", v("a", nil))
	put(t, s, ns{"n"}, "missing", v("b", 1))
	put(t, s, ns{"n"}, "one", v("a", 1))
	put(t, s, ns{"n"}, "zero", v("a", 0))
	put(t, s, ns{"n"}, "false", v("a", false))
	put(t, s, ns{"n"}, "empty", v("a", ""))
	f := func(filter map[string]any) []redisstore.SearchItem {
		return search(t, s, ns{"n"}, redisstore.SearchOptions{Filter: filter, Limit: 100})
	}
	wantSameKeys(t, "a = null", f(v("a", nil)), "null", "missing")
	wantSameKeys(t, "a $eq null", f(v("a", v("$eq", nil))), "null", "missing")
	wantSameKeys(t, "a $ne null", f(v("a", v("$ne", nil))), "one", "zero", "false", "empty")
	wantSameKeys(t, "a $ne 1", f(v("a", v("$ne", 1))), "null", "missing", "zero", "false", "empty")
	wantSameKeys(t, "a = 0", f(v("a", 0)), "zero")
	wantSameKeys(t, "a = false", f(v("a", false)), "false")
	wantSameKeys(t, "a = \"\"", f(v("a", "")), "empty")
	wantSameKeys(t, "a > -1", f(v("a", v("$gt", -1))), "one", "zero")
}

func filterDeepEquality(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"d"}, "list", v("tags", []any{"a", "b"}, "obj", v("x", 1, "y", v("z", "w"))))
	put(t, s, ns{"d"}, "other", v("tags", []any{"b", "a"}, "obj", v("x", 1)))
	put(t, s, ns{"d"}, "longer", v("tags", []any{"a", "b", "c"}, "obj", v("x", 1.0, "y", v("z", "w"), "extra", true)))
	f := func(filter map[string]any) []redisstore.SearchItem {
		return search(t, s, ns{"d"}, redisstore.SearchOptions{Filter: filter})
	}
	wantSameKeys(t, "tags = [a b]", f(v("tags", []any{"a", "b"})), "list")
	wantSameKeys(t, "tags = []string{a b}", f(v("tags", []string{"a", "b"})), "list")
	wantSameKeys(t, "tags $ne [a b]", f(v("tags", v("$ne", []any{"a", "b"}))), "other", "longer")
	wantSameKeys(t, "obj = {x: 1, y: {z: w}}", f(v("obj", v("y", v("z", "w"), "x", 1.0))), "list")
	wantSameKeys(t, "obj = {x: 1}", f(v("obj", v("x", 1))), "other")
	wantSameKeys(t, "obj.y = {z: w}", f(v("obj.y", v("z", "w"))), "list", "longer")
}

func filterStrings(t *testing.T, e Env) {
	s := store(t, e)
	for _, w := range []string{"B", "a", "b", "ab", "é", "Z", "", "10", "9"} {
		put(t, s, ns{"s"}, "k"+w, v("w", w))
	}
	f := func(filter map[string]any) []redisstore.SearchItem {
		return search(t, s, ns{"s"}, redisstore.SearchOptions{Filter: filter, Limit: 100})
	}
	// Bytes: "" < "10" < "9" < "B" < "Z" < "a" < "ab" < "b" < "é".
	wantSameKeys(t, "w > a", f(v("w", v("$gt", "a"))), "kab", "kb", "ké")
	wantSameKeys(t, "w >= a", f(v("w", v("$gte", "a"))), "ka", "kab", "kb", "ké")
	wantSameKeys(t, "w < B", f(v("w", v("$lt", "B"))), "k", "k10", "k9")
	wantSameKeys(t, "w <= 9", f(v("w", v("$lte", "9"))), "k", "k10", "k9")
}

func filterTypes(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"t"}, "num", v("x", 5))
	put(t, s, ns{"t"}, "str", v("x", "5"))
	put(t, s, ns{"t"}, "bool", v("x", true))
	put(t, s, ns{"t"}, "list", v("x", []any{5}))
	f := func(filter map[string]any) []redisstore.SearchItem {
		return search(t, s, ns{"t"}, redisstore.SearchOptions{Filter: filter, Limit: 100})
	}
	wantSameKeys(t, "x = 5", f(v("x", 5)), "num")
	wantSameKeys(t, "x = \"5\"", f(v("x", "5")), "str")
	wantSameKeys(t, "x > 4", f(v("x", v("$gt", 4))), "num")
	wantSameKeys(t, "x > \"4\"", f(v("x", v("$gt", "4"))), "str")
	wantSameKeys(t, "x = true", f(v("x", true)), "bool")
	wantSameKeys(t, "x = [5]", f(v("x", []any{5})), "list")
}

// The filter runs before Offset and Limit: a page is never short because
// items were filtered out.
func filterBeforePaging(t *testing.T, e Env) {
	s := store(t, e)
	var want []string
	// 120 items over 3 namespaces, one in 7 a match: a page needs far more
	// index entries than it returns, so the walk reads each namespace's
	// index in several batches.
	for i := range 120 {
		kind := "noise"
		if i%7 == 0 {
			kind = "signal"
		}
		k := fmt.Sprintf("k%03d", i)
		put(t, s, ns{"f", fmt.Sprint(i % 3)}, k, v("kind", kind, "i", i))
		if kind == "signal" {
			want = append([]string{k}, want...)
		}
	}
	for _, lim := range []int{1, 3, 5} {
		for off := 0; off <= len(want); off += lim {
			page := want[off:min(off+lim, len(want))]
			got := search(t, s, ns{"f"}, redisstore.SearchOptions{Filter: v("kind", "signal"), Limit: lim, Offset: off})
			wantKeys(t, fmt.Sprintf("signal page at %d, limit %d", off, lim), got, page...)
		}
	}
	got := search(t, s, ns{"f", "1"}, redisstore.SearchOptions{Filter: v("i", v("$lt", 7)), Limit: 2})
	wantKeys(t, "oldest signal of one namespace", got, "k004", "k001")
}

func filterInvalid(t *testing.T, e Env) {
	s := filterStore(t, e)
	for _, f := range []map[string]any{
		v("score", v("$regex", "x")),
		v("score", v("$gt", 1, "plain", 2)),
		v("score", v("$gt", true)),
		v("score", v("$lt", []any{1})),
		v("score", v("$gte", nil)),
		v("", 1),
		v("a..b", 1),
		v(".a", 1),
		v("score", v("$eq", func() {})),
	} {
		_, err := s.Search(testctx.Context(t), ns{"test"}, redisstore.SearchOptions{Filter: f})
		wantErr(t, fmt.Sprint("filter ", f), err, redisstore.ErrInvalidFilter)
	}
}
