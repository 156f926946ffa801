package storetest

import (
	"fmt"
	"github.com/graphstate/redcheck/internal/testctx"
	"math"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/redisstore"
)

// Points of LangGraph's store contract found by porting its Python, Postgres,
// SQLite and JS store tests (issue 13), and the bounds of this store.
var contractCases = []testCase{
	{"non_finite_filter_operands", contractNonFinite},
	{"empty_array_is_not_empty_object", contractEmptyContainers},
	{"dotted_top_level_key", contractDottedKey},
	{"nil_value_deletes", contractNilDeletes},
	{"limit_and_offset_caps", contractCaps},
	{"walks_in_many_steps", contractManySteps},
}

// $lt +Inf and $gt -Inf match every number, $eq NaN matches none.
func contractNonFinite(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"f"}, "small", v("x", -1e300))
	put(t, s, ns{"f"}, "int", v("x", 3))
	put(t, s, ns{"f"}, "big", v("x", 1e300))
	put(t, s, ns{"f"}, "str", v("x", "3"))
	put(t, s, ns{"f"}, "none", v("y", 1))
	inf, nan := math.Inf(1), math.NaN()
	f := func(filter map[string]any) []redisstore.SearchItem {
		return search(t, s, ns{"f"}, redisstore.SearchOptions{Filter: filter, Limit: 100})
	}
	numbers := []string{"small", "int", "big"}
	wantSameKeys(t, "$lt +Inf", f(v("x", v("$lt", inf))), numbers...)
	wantSameKeys(t, "$lte +Inf", f(v("x", v("$lte", inf))), numbers...)
	wantSameKeys(t, "$gt -Inf", f(v("x", v("$gt", -inf))), numbers...)
	wantSameKeys(t, "$gte -Inf (float32)", f(v("x", v("$gte", float32(-inf)))), numbers...)
	wantSameKeys(t, "$gt +Inf", f(v("x", v("$gt", inf))))
	wantSameKeys(t, "$lt -Inf", f(v("x", v("$lt", -inf))))
	wantSameKeys(t, "$eq NaN", f(v("x", v("$eq", nan))))
	wantSameKeys(t, "= NaN", f(v("x", nan)))
	wantSameKeys(t, "= +Inf", f(v("x", inf)))
	wantSameKeys(t, "$gt NaN", f(v("x", v("$gt", nan))))
	wantSameKeys(t, "$ne NaN", f(v("x", v("$ne", nan))), "small", "int", "big", "str", "none")
	wantSameKeys(t, "$gt -Inf and $lt 10", f(v("x", v("$gt", -inf, "$lt", 10))), "small", "int")
}

// {"e": []} and {"e": {}} are different JSON values.
func contractEmptyContainers(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"c"}, "list", v("e", []any{}))
	put(t, s, ns{"c"}, "obj", v("e", map[string]any{}))
	put(t, s, ns{"c"}, "nested", v("e", []any{[]any{}}))
	put(t, s, ns{"c"}, "nestedobj", v("e", []any{map[string]any{}}))
	f := func(filter map[string]any) []redisstore.SearchItem {
		return search(t, s, ns{"c"}, redisstore.SearchOptions{Filter: filter, Limit: 100})
	}
	wantSameKeys(t, "e = []", f(v("e", []any{})), "list")
	wantSameKeys(t, "e = {}", f(v("e", map[string]any{})), "obj")
	wantSameKeys(t, "e = [[]]", f(v("e", []any{[]any{}})), "nested")
	wantSameKeys(t, "e = [{}]", f(v("e", []any{map[string]any{}})), "nestedobj")
	wantSameKeys(t, "e $ne []", f(v("e", v("$ne", []any{}))), "obj", "nested", "nestedobj")
}

// A top-level key holding a dot is filtered by its name; other keys by the
// dotted path.
func contractDottedKey(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"d"}, "flat", v("a.b", 1))
	put(t, s, ns{"d"}, "nested", v("a", v("b", 1)))
	put(t, s, ns{"d"}, "both", v("a.b", 2, "a", v("b", 1)))
	f := func(filter map[string]any) []redisstore.SearchItem {
		return search(t, s, ns{"d"}, redisstore.SearchOptions{Filter: filter, Limit: 100})
	}
	wantSameKeys(t, "a.b = 1", f(v("a.b", 1)), "flat", "nested")
	wantSameKeys(t, "a.b = 2", f(v("a.b", 2)), "both")
	wantSameKeys(t, "a.b > 0", f(v("a.b", v("$gt", 0))), "flat", "nested", "both")
}

// A nil value deletes, in Put and in a PutOp, as None does in LangGraph.
func contractNilDeletes(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"n"}, "a", v("x", 1))
	put(t, s, ns{"n"}, "b", v("x", 2))
	put(t, s, ns{"n"}, "c", v("x", 3))
	put(t, s, ns{"n"}, "a", nil)
	if get(t, s, ns{"n"}, "a") != nil {
		t.Fatal("Put with a nil value did not delete")
	}
	res := batch(t, s,
		redisstore.PutOp{Namespace: ns{"n"}, Key: "b", Value: nil},
		redisstore.GetOp{Namespace: ns{"n"}, Key: "b"},
		redisstore.PutOp{Namespace: ns{"n"}, Key: "d", Value: v("x", 4)},
		redisstore.PutOp{Namespace: ns{"n"}, Key: "d", Value: nil},
	)
	if res[1].Item == nil {
		t.Fatal("the batch's get ran after its writes")
	}
	for _, k := range []string{"b", "d"} {
		if get(t, s, ns{"n"}, k) != nil {
			t.Fatalf("PutOp with a nil value left %q", k)
		}
	}
	wantKeys(t, "left", search(t, s, ns{"n"}, redisstore.SearchOptions{}), "c")
	put(t, s, ns{"n"}, "c", nil)
	wantNamespaces(t, "namespaces", list(t, s, lo{}))
}

// Limit and Offset have caps; above them, ErrInvalidArgument.
func contractCaps(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"c"}, "k", v())
	ctx := testctx.Context(t)
	for _, o := range []redisstore.SearchOptions{
		{Limit: redisstore.MaxSearchLimit + 1},
		{Offset: redisstore.MaxSearchOffset + 1},
		{Limit: 1e9},
	} {
		_, err := s.Search(ctx, nil, o)
		wantErr(t, fmt.Sprintf("search %+v", o), err, redisstore.ErrInvalidArgument)
		_, err = s.Batch(ctx, []redisstore.Op{redisstore.SearchOp{Options: o}})
		wantErr(t, fmt.Sprintf("batch search %+v", o), err, redisstore.ErrInvalidArgument)
	}
	for _, o := range []lo{{Limit: redisstore.MaxListLimit + 1}, {Offset: redisstore.MaxListOffset + 1}} {
		_, err := s.ListNamespaces(ctx, o)
		wantErr(t, fmt.Sprintf("list %+v", o), err, redisstore.ErrInvalidArgument)
	}
	wantLen(t, "at the caps", search(t, s, nil, redisstore.SearchOptions{Limit: redisstore.MaxSearchLimit, Offset: redisstore.MaxSearchOffset}), 0)
	wantLen(t, "limit at the cap", search(t, s, nil, redisstore.SearchOptions{Limit: redisstore.MaxSearchLimit}), 1)
	wantLen(t, "list at the caps", list(t, s, lo{Limit: redisstore.MaxListLimit, Offset: redisstore.MaxListOffset}), 0)
}

// Searches and listings over more than one step's work give what one pass
// would: 1,300 items, most written by batches (so many share an
// UpdatedAt), over 3 namespaces, and 700 more namespaces.
func contractManySteps(t *testing.T, e Env) {
	s := e.New(t, redisstore.Options{Embedder: hashing(t), Dims: kitDims, Fields: []string{"text"}})
	type rec struct {
		key  string
		kind int
	}
	var ops []redisstore.Op
	var items []rec
	for i := range 1300 {
		k := fmt.Sprintf("k%04d", i)
		ops = append(ops, redisstore.PutOp{Namespace: ns{"m", fmt.Sprint(i % 3)}, Key: k,
			Value: v("kind", i%5, "text", fmt.Sprintf("word%d other%d", i%17, i%5))})
		items = append(items, rec{k, i % 5})
	}
	for i := range 700 {
		ops = append(ops, redisstore.PutOp{Namespace: ns{"z", fmt.Sprintf("u%03d", i), "mem"}, Key: "k", Value: v("i", i), Options: []redisstore.PutOption{redisstore.NoIndex()}})
	}
	batch(t, s, ops...)

	// Newest first, every page: each item once, UpdatedAt not increasing.
	seen := map[string]bool{}
	var prev *redisstore.SearchItem
	for off := 0; off < 1300; off += 250 {
		for _, it := range search(t, s, ns{"m"}, redisstore.SearchOptions{Limit: 250, Offset: off}) {
			if seen[it.Key] {
				t.Fatalf("%s on two pages", it.Key)
			}
			seen[it.Key] = true
			if prev != nil && it.UpdatedAt.After(prev.UpdatedAt) {
				t.Fatalf("%s is newer than %s before it", it.Key, prev.Key)
			}
			prev = &it
		}
	}
	if len(seen) != 1300 {
		t.Fatalf("pages covered %d items, want 1300", len(seen))
	}
	// A filter keeping one in five, past the first steps.
	var kind3 []string
	for _, r := range items {
		if r.kind == 3 {
			kind3 = append(kind3, r.key)
		}
	}
	got := search(t, s, ns{"m"}, redisstore.SearchOptions{Filter: v("kind", 3), Limit: 1000})
	wantSameKeys(t, "kind 3", got, kind3...)
	// A query: the top 20 of 1,300 by cosine, as one pass ranks them.
	got = search(t, s, nil, redisstore.SearchOptions{Query: "word5 other3", Limit: 20})
	all := search(t, s, nil, redisstore.SearchOptions{Query: "word5 other3", Limit: 1000, Offset: 0})
	more := search(t, s, nil, redisstore.SearchOptions{Query: "word5 other3", Limit: 1000, Offset: 1000})
	all = append(all, more...)
	if len(all) != 1300 {
		t.Fatalf("query pages hold %d items, want 1300 (the 700 unindexed left out)", len(all))
	}
	for i := 1; i < len(all); i++ {
		if score(t, all[i]) > score(t, all[i-1]) {
			t.Fatalf("scores out of order at %d", i)
		}
	}
	wantKeys(t, "top 20", got, keysOf(all[:20])...)
	// Namespaces: a suffix matching two among 703, and wildcards.
	put(t, s, ns{"z", "u100", "special"}, "k", v())
	put(t, s, ns{"z", "u650", "special"}, "k", v())
	wantNamespaces(t, "suffix", list(t, s, lo{Suffix: ns{"special"}}), ns{"z", "u100", "special"}, ns{"z", "u650", "special"})
	wantNamespaces(t, "wildcard prefix", list(t, s, lo{Prefix: ns{"*", "u699"}}), ns{"z", "u699", "mem"})
	nss := list(t, s, lo{Prefix: ns{"z"}, MaxDepth: 2, Limit: 1000})
	if len(nss) != 700 || !slices.Equal(nss[0], ns{"z", "u000"}) || !slices.Equal(nss[699], ns{"z", "u699"}) {
		t.Fatalf("max depth 2: %d namespaces, from %q", len(nss), nss[:1])
	}
	wantNamespaces(t, "page at 650", list(t, s, lo{Prefix: ns{"z"}, MaxDepth: 2, Limit: 2, Offset: 650}), ns{"z", "u650"}, ns{"z", "u651"})
}
