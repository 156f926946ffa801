package storetest

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redisstore"
)

var basicCases = []testCase{
	{"basic_store_ops", basicStoreOps},
	{"update_keeps_created_at", updateKeepsCreatedAt},
	{"get_missing", getMissing},
	{"delete_missing", deleteMissing},
	{"namespaces_are_injective", namespacesAreInjective},
	{"hostile_labels_and_keys", hostileLabelsAndKeys},
	{"value_round_trip", valueRoundTrip},
	{"langgraph_root_and_periods", langgraphRootAndPeriods},
	{"invalid_input", invalidInput},
}

// test_basic_store_ops (Postgres).
func basicStoreOps(t *testing.T, e Env) {
	s := store(t, e)
	n := ns{"test", "documents"}
	put(t, s, n, "doc1", v("title", "Test Document", "content", "Hello, World!"))
	it := get(t, s, n, "doc1")
	if it == nil || !slicesEqual(it.Namespace, n) || it.Key != "doc1" {
		t.Fatalf("item %+v", it)
	}
	wantValue(t, "value", it.Value, v("title", "Test Document", "content", "Hello, World!"))

	put(t, s, n, "doc1", v("title", "Updated Document", "content", "Hello, Updated!"))
	up := get(t, s, n, "doc1")
	wantValue(t, "updated value", up.Value, v("title", "Updated Document", "content", "Hello, Updated!"))
	if !up.UpdatedAt.After(it.UpdatedAt) {
		t.Fatalf("UpdatedAt %v not after %v", up.UpdatedAt, it.UpdatedAt)
	}
	if get(t, s, ns{"test", "other_documents"}, "doc1") != nil {
		t.Fatal("an item of another namespace was found")
	}
	del(t, s, n, "doc1")
	if get(t, s, n, "doc1") != nil {
		t.Fatal("deleted item still found")
	}
}

func updateKeepsCreatedAt(t *testing.T, e Env) {
	s := store(t, e)
	n := ns{"u"}
	put(t, s, n, "k", v("a", 1))
	first := get(t, s, n, "k")
	if !first.CreatedAt.Equal(first.UpdatedAt) {
		t.Fatalf("new item: CreatedAt %v, UpdatedAt %v", first.CreatedAt, first.UpdatedAt)
	}
	for i := range 3 {
		put(t, s, n, "k", v("a", i+2))
	}
	last := get(t, s, n, "k")
	if !last.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("CreatedAt moved from %v to %v", first.CreatedAt, last.CreatedAt)
	}
	if !last.UpdatedAt.After(first.UpdatedAt) {
		t.Fatalf("UpdatedAt did not move: %v then %v", first.UpdatedAt, last.UpdatedAt)
	}
	// A delete forgets the item: a new put creates it anew.
	del(t, s, n, "k")
	put(t, s, n, "k", v("a", 9))
	again := get(t, s, n, "k")
	if !again.CreatedAt.Equal(again.UpdatedAt) || again.CreatedAt.Before(last.UpdatedAt) {
		t.Fatalf("re-created item: CreatedAt %v, UpdatedAt %v (the deleted one was updated at %v)", again.CreatedAt, again.UpdatedAt, last.UpdatedAt)
	}
}

func getMissing(t *testing.T, e Env) {
	s := store(t, e)
	_, err := s.Get(testctx.Context(t), ns{"nothing", "here"}, "k")
	wantErr(t, "Get of a missing item", err, redisstore.ErrNotFound)
	put(t, s, ns{"a"}, "k", v())
	_, err = s.Get(testctx.Context(t), ns{"a"}, "other")
	wantErr(t, "Get of a missing key in a live namespace", err, redisstore.ErrNotFound)
}

func deleteMissing(t *testing.T, e Env) {
	s := store(t, e)
	del(t, s, ns{"never"}, "put")
	put(t, s, ns{"a"}, "k", v("x", 1))
	del(t, s, ns{"a"}, "k")
	del(t, s, ns{"a"}, "k")
	wantNamespaces(t, "namespaces after deleting the only item", list(t, s, redisstore.ListNamespacesOptions{}))
}

// ("a", "b:c") and ("a:b", "c") and the like never meet.
func namespacesAreInjective(t *testing.T, e Env) {
	s := store(t, e)
	type addr struct {
		n   ns
		key string
	}
	addrs := []addr{
		{ns{"a", "b:c"}, "k"}, {ns{"a:b", "c"}, "k"}, {ns{"a", "b"}, "c:k"}, {ns{"a", "b", "c"}, "k"},
		{ns{"a:b:c"}, "k"}, {ns{"a"}, "b:c:k"}, {ns{"ab"}, "k"}, {ns{"a", "b"}, "c"}, {ns{"a", "b", "c:k"}, ""},
		{ns{"a%3Ab"}, "k"}, {ns{"a.b"}, "k"}, {ns{"a", "b.c"}, "k"},
	}
	for i, a := range addrs {
		put(t, s, a.n, a.key, v("i", i))
	}
	for i, a := range addrs {
		it := get(t, s, a.n, a.key)
		if it == nil {
			t.Fatalf("%q/%q: missing", a.n, a.key)
		}
		wantValue(t, strings.Join(a.n, "|")+"/"+a.key, it.Value, v("i", i))
	}
	got := search(t, s, nil, redisstore.SearchOptions{Limit: 100})
	wantLen(t, "all items", got, len(addrs))
}

func hostileLabelsAndKeys(t *testing.T, e Env) {
	s := store(t, e)
	labels := []string{"{x}", "}", "{", "a}b{c", "*", "?", "[a]", "%", "%25", "\x00", "\x00\x01", "a\x00b", "日本語", "é", " ", "\xff\xfe", strings.Repeat("z", redisstore.MaxLabelLen)}
	for i, l := range labels {
		n := ns{"hostile", l}
		key := "k:" + l[:min(len(l), 64)]
		put(t, s, n, key, v("i", i))
		it := get(t, s, n, key)
		if it == nil || it.Key != key || !slicesEqual(it.Namespace, n) {
			t.Fatalf("label %q: got %+v", l, it)
		}
	}
	got := search(t, s, ns{"hostile"}, redisstore.SearchOptions{Limit: 100})
	wantLen(t, "search", got, len(labels))
	for _, it := range got {
		if l := it.Namespace[1]; len(it.Namespace) != 2 || it.Key != "k:"+l[:min(len(l), 64)] {
			t.Fatalf("search item %q/%q", it.Namespace, it.Key)
		}
	}
	nss := list(t, s, redisstore.ListNamespacesOptions{Prefix: ns{"hostile"}, Limit: 100})
	wantLen(t, "namespaces", nss, len(labels))
	for i := 1; i < len(nss); i++ {
		if slicesCompare(nss[i-1], nss[i]) >= 0 {
			t.Fatalf("namespaces out of order: %q before %q", nss[i-1], nss[i])
		}
	}
}

func valueRoundTrip(t *testing.T, e Env) {
	s := store(t, e)
	val := map[string]any{
		"int": 42, "neg": -7, "big": int64(1) << 60, "float": 2.5, "tiny": 1e-300, "whole_float": 3.0,
		"str": "héllo \"quoted\" \\ <tag> &", "bool": true, "null": nil,
		"list":   []any{1, "two", []any{3.5}, map[string]any{"four": 4}},
		"nested": map[string]any{"a": map[string]any{"b": map[string]any{"c": "deep"}}},
		"empty":  map[string]any{}, "empty_list": []any{}, "strs": []string{"x", "y"},
	}
	put(t, s, ns{"rt"}, "k", val)
	it := get(t, s, ns{"rt"}, "k")
	wantValue(t, "round trip", it.Value, val)
	if _, ok := it.Value["int"].(int64); !ok {
		t.Errorf("an int comes back as %T, want int64", it.Value["int"])
	}
	if f, ok := it.Value["float"].(float64); !ok || f != 2.5 {
		t.Errorf("2.5 comes back as %T %v", it.Value["float"], it.Value["float"])
	}
	put(t, s, ns{"rt"}, "empty", map[string]any{})
	if got := get(t, s, ns{"rt"}, "empty"); got == nil || len(got.Value) != 0 || got.Value == nil {
		t.Fatalf("empty value: %+v", got)
	}
}

// LangGraph refuses periods in labels and a "langgraph" root because its
// stores join labels with '.' or reserve the root; here labels are escaped
// one by one, so both are ordinary.
func langgraphRootAndPeriods(t *testing.T, e Env) {
	s := store(t, e)
	doc := v("foo", "bar")
	for _, n := range []ns{{"langgraph", "foo"}, {"foo", "langgraph", "foo"}, {"the", "thing.about"}} {
		put(t, s, n, "bar", doc)
		wantValue(t, "get", get(t, s, n, "bar").Value, doc)
		got := search(t, s, n, redisstore.SearchOptions{})
		wantLen(t, "search", got, 1)
		del(t, s, n, "bar")
		if get(t, s, n, "bar") != nil {
			t.Fatal("not deleted")
		}
	}
	put(t, s, ns{"a.b"}, "k", doc)
	if got := search(t, s, ns{"a"}, redisstore.SearchOptions{}); len(got) != 0 {
		t.Fatalf("prefix (a) matched (a.b): %v", keysOf(got))
	}
}

// test_cannot_put_empty_namespace, and the limits.
func invalidInput(t *testing.T, e Env) {
	s := store(t, e)
	ctx := testctx.Context(t)
	doc := v("foo", "bar")
	for _, n := range []ns{nil, {}, {"some", "fun", ""}, {""}} {
		wantErr(t, "Put empty namespace or label", s.Put(ctx, n, "foo", doc), redisstore.ErrInvalidNamespace)
		_, err := s.Get(ctx, n, "foo")
		wantErr(t, "Get", err, redisstore.ErrInvalidNamespace)
		wantErr(t, "Delete", s.Delete(ctx, n, "foo"), redisstore.ErrInvalidNamespace)
	}
	_, err := s.Search(ctx, ns{"a", ""}, redisstore.SearchOptions{})
	wantErr(t, "Search with an empty label", err, redisstore.ErrInvalidNamespace)
	_, err = s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Suffix: ns{""}})
	wantErr(t, "ListNamespaces with an empty label", err, redisstore.ErrInvalidNamespace)
	deep := make(ns, redisstore.MaxNamespaceDepth+1)
	for i := range deep {
		deep[i] = "d"
	}
	wantErr(t, "too deep", s.Put(ctx, deep, "k", doc), redisstore.ErrInvalidNamespace)
	wantErr(t, "long label", s.Put(ctx, ns{strings.Repeat("l", redisstore.MaxLabelLen+1)}, "k", doc), redisstore.ErrInvalidNamespace)
	wantErr(t, "long key", s.Put(ctx, ns{"a"}, strings.Repeat("k", redisstore.MaxKeyLen+1), doc), redisstore.ErrInvalidKey)
	wantErr(t, "NaN", s.Put(ctx, ns{"a"}, "k", v("x", math.NaN())), redisstore.ErrInvalidValue)
	wantErr(t, "func", s.Put(ctx, ns{"a"}, "k", v("x", func() {})), redisstore.ErrInvalidValue)
	var nested any = "leaf"
	for range redisstore.MaxValueDepth {
		nested = []any{nested}
	}
	wantErr(t, "too deep a value", s.Put(ctx, ns{"a"}, "k", v("x", nested)), redisstore.ErrInvalidValue)
	wantErr(t, "negative TTL", s.Put(ctx, ns{"a"}, "k", doc, redisstore.WithTTL(-time.Second)), redisstore.ErrInvalidArgument)
	wantErr(t, "sub-millisecond TTL", s.Put(ctx, ns{"a"}, "k", doc, redisstore.WithTTL(time.Microsecond)), redisstore.ErrInvalidArgument)
	_, err = s.Get(ctx, ns{"a"}, "k", redisstore.WithRefresh(redisstore.Refresh(9)))
	wantErr(t, "bad Refresh", err, redisstore.ErrInvalidArgument)
	_, err = s.Search(ctx, nil, redisstore.SearchOptions{Limit: -1})
	wantErr(t, "negative Limit", err, redisstore.ErrInvalidArgument)
	_, err = s.Search(ctx, nil, redisstore.SearchOptions{Offset: -1})
	wantErr(t, "negative Offset", err, redisstore.ErrInvalidArgument)
	_, err = s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{MaxDepth: -1})
	wantErr(t, "negative MaxDepth", err, redisstore.ErrInvalidArgument)
	// Nil options are ignored.
	if err := s.Put(ctx, ns{"nil-opts"}, "k", doc, nil); err != nil {
		t.Fatalf("Put with a nil option: %v", err)
	}
	if _, err := s.Get(ctx, ns{"nil-opts"}, "k", nil); err != nil {
		t.Fatalf("Get with a nil option: %v", err)
	}
	del(t, s, ns{"nil-opts"}, "k")
	// Nothing of the above was written.
	if got := search(t, s, nil, redisstore.SearchOptions{}); len(got) != 0 {
		t.Fatalf("refused puts wrote %v", keysOf(got))
	}
	// Deep, but within the limit, is fine.
	nested = "leaf"
	for range redisstore.MaxValueDepth - 1 {
		nested = []any{nested}
	}
	put(t, s, ns{"a"}, "deep", v("x", nested))
	if err := s.Put(ctx, ns{"a"}, "k", doc); errors.Is(err, redisstore.ErrInvalidNamespace) {
		t.Fatal(err)
	}
}
