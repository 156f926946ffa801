package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/redisstore"
)

var searchCases = []testCase{
	{"search", searchBasic},
	{"batch_search_ops", batchSearchOps},
	{"prefix_matches_whole_labels", prefixWholeLabels},
	{"empty_prefix_matches_all", emptyPrefixMatchesAll},
	{"newest_first", newestFirst},
	{"newest_first_across_namespaces", newestFirstAcrossNamespaces},
	{"pagination", searchPagination},
	{"deleted_items_leave", deletedItemsLeave},
}

// test_search (Postgres).
func searchBasic(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"test", "docs"}, "doc1", v("title", "First Doc", "author", "Alice", "tags", []any{"important"}))
	put(t, s, ns{"test", "docs"}, "doc2", v("title", "Second Doc", "author", "Bob", "tags", []any{"draft"}))
	put(t, s, ns{"test", "images"}, "img1", v("title", "Image 1", "author", "Alice", "tags", []any{"final"}))

	wantLen(t, "all", search(t, s, ns{"test"}, redisstore.SearchOptions{}), 3)
	docs := search(t, s, ns{"test", "docs"}, redisstore.SearchOptions{})
	wantSameKeys(t, "docs", docs, "doc1", "doc2")
	for _, it := range docs {
		if !slices.Equal(it.Namespace, ns{"test", "docs"}) || it.Score != nil {
			t.Fatalf("doc item %+v", it)
		}
	}
	alice := search(t, s, ns{"test"}, redisstore.SearchOptions{Filter: v("author", "Alice")})
	wantSameKeys(t, "author Alice", alice, "doc1", "img1")
	wantLen(t, "limit 2", search(t, s, ns{"test"}, redisstore.SearchOptions{Limit: 2}), 2)
	wantLen(t, "offset 2", search(t, s, ns{"test"}, redisstore.SearchOptions{Offset: 2}), 1)
	for _, k := range []string{"doc1", "doc2"} {
		del(t, s, ns{"test", "docs"}, k)
	}
	del(t, s, ns{"test", "images"}, "img1")
	wantLen(t, "after deletes", search(t, s, ns{"test"}, redisstore.SearchOptions{}), 0)
}

// test_batch_search_ops (Postgres), through Search.
func batchSearchOps(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"test", "foo"}, "key1", v("data", "value1", "tag", "a"))
	put(t, s, ns{"test", "bar"}, "key2", v("data", "value2", "tag", "a"))
	put(t, s, ns{"test", "baz"}, "key3", v("data", "value3", "tag", "b"))
	got := search(t, s, ns{"test"}, redisstore.SearchOptions{Filter: v("tag", "a")})
	wantSameKeys(t, "tag a", got, "key1", "key2")
	wantLen(t, "limit 2", search(t, s, ns{"test"}, redisstore.SearchOptions{Limit: 2}), 2)
	foo := search(t, s, ns{"test", "foo"}, redisstore.SearchOptions{})
	wantKeys(t, "test/foo", foo, "key1")
	if !slices.Equal(foo[0].Namespace, ns{"test", "foo"}) {
		t.Fatalf("namespace %q", foo[0].Namespace)
	}
}

// ("a") matches ("a") and ("a", "b"), never ("ab").
func prefixWholeLabels(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"a"}, "1", v())
	put(t, s, ns{"a", "b"}, "2", v())
	put(t, s, ns{"a", "b", "c"}, "3", v())
	put(t, s, ns{"ab"}, "4", v())
	put(t, s, ns{"a b"}, "5", v())
	put(t, s, ns{"a\x00"}, "6", v())
	put(t, s, ns{"b", "a"}, "7", v())
	wantSameKeys(t, "(a)", search(t, s, ns{"a"}, redisstore.SearchOptions{}), "1", "2", "3")
	wantSameKeys(t, "(a, b)", search(t, s, ns{"a", "b"}, redisstore.SearchOptions{}), "2", "3")
	wantSameKeys(t, "(ab)", search(t, s, ns{"ab"}, redisstore.SearchOptions{}), "4")
	wantSameKeys(t, "(a\\x00)", search(t, s, ns{"a\x00"}, redisstore.SearchOptions{}), "6")
	wantSameKeys(t, "(a, b, c)", search(t, s, ns{"a", "b", "c"}, redisstore.SearchOptions{}), "3")
	wantLen(t, "(a, b, c, d)", search(t, s, ns{"a", "b", "c", "d"}, redisstore.SearchOptions{}), 0)
	wantLen(t, "(b, a, x)", search(t, s, ns{"b", "a", "x"}, redisstore.SearchOptions{}), 0)
	wantLen(t, "(*) is a literal label in Search", search(t, s, ns{"*"}, redisstore.SearchOptions{}), 0)
}

// test_scores searches with the prefix (): every item.
func emptyPrefixMatchesAll(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"x"}, "1", v())
	put(t, s, ns{"y", "z"}, "2", v())
	wantSameKeys(t, "nil prefix", search(t, s, nil, redisstore.SearchOptions{}), "1", "2")
	wantSameKeys(t, "empty prefix", search(t, s, ns{}, redisstore.SearchOptions{}), "1", "2")
}

func newestFirst(t *testing.T, e Env) {
	s := store(t, e)
	n := ns{"n"}
	for _, k := range []string{"a", "b", "c", "d"} {
		put(t, s, n, k, v("k", k))
	}
	wantKeys(t, "newest first", search(t, s, n, redisstore.SearchOptions{}), "d", "c", "b", "a")
	put(t, s, n, "b", v("k", "b2"))
	wantKeys(t, "after updating b", search(t, s, n, redisstore.SearchOptions{}), "b", "d", "c", "a")
	got := search(t, s, n, redisstore.SearchOptions{})
	for i := 1; i < len(got); i++ {
		if got[i].UpdatedAt.After(got[i-1].UpdatedAt) {
			t.Fatalf("UpdatedAt out of order at %d", i)
		}
	}
}

// The merge of several namespaces' indexes keeps the global order.
func newestFirstAcrossNamespaces(t *testing.T, e Env) {
	s := store(t, e)
	var want []string
	for i := range 40 {
		n := ns{"m", fmt.Sprint("ns", i%7)}
		if i%5 == 0 {
			n = append(n, "deeper")
		}
		k := fmt.Sprintf("k%02d", i)
		put(t, s, n, k, v("i", i))
		want = append([]string{k}, want...)
	}
	// Touch a few old items: they move to the front.
	for _, i := range []int{3, 0, 17} {
		k := fmt.Sprintf("k%02d", i)
		n := ns{"m", fmt.Sprint("ns", i%7)}
		if i%5 == 0 {
			n = append(n, "deeper")
		}
		put(t, s, n, k, v("i", i, "touched", true))
		want = append([]string{k}, slices.DeleteFunc(want, func(x string) bool { return x == k })...)
	}
	wantKeys(t, "all, newest first", search(t, s, ns{"m"}, redisstore.SearchOptions{Limit: 100}), want...)
	for off := 0; off < 45; off += 6 {
		end := min(off+6, len(want))
		var page []string
		if off < len(want) {
			page = want[off:end]
		}
		wantKeys(t, fmt.Sprint("page at ", off), search(t, s, ns{"m"}, redisstore.SearchOptions{Limit: 6, Offset: off}), page...)
	}
}

// test_vector_search_pagination without vectors, and paging past the end.
func searchPagination(t *testing.T, e Env) {
	s := store(t, e)
	for i := range 25 {
		put(t, s, ns{"p"}, fmt.Sprintf("doc%02d", i), v("i", i))
	}
	wantLen(t, "default limit", search(t, s, ns{"p"}, redisstore.SearchOptions{}), redisstore.DefaultSearchLimit)
	seen := map[string]bool{}
	for off := 0; off < 25; off += 10 {
		for _, it := range search(t, s, ns{"p"}, redisstore.SearchOptions{Limit: 10, Offset: off}) {
			if seen[it.Key] {
				t.Fatalf("%s on two pages", it.Key)
			}
			seen[it.Key] = true
		}
	}
	if len(seen) != 25 {
		t.Fatalf("pages covered %d items, want 25", len(seen))
	}
	wantLen(t, "offset past the end", search(t, s, ns{"p"}, redisstore.SearchOptions{Offset: 100}), 0)
}

func deletedItemsLeave(t *testing.T, e Env) {
	s := store(t, e)
	for i := range 5 {
		put(t, s, ns{"d", fmt.Sprint(i)}, "k", v("i", i))
	}
	del(t, s, ns{"d", "2"}, "k")
	got := search(t, s, ns{"d"}, redisstore.SearchOptions{})
	wantLen(t, "after delete", got, 4)
	for _, it := range got {
		if it.Namespace[1] == "2" {
			t.Fatal("deleted item returned")
		}
	}
	nss := list(t, s, redisstore.ListNamespacesOptions{Prefix: ns{"d"}})
	wantLen(t, "namespaces after delete", nss, 4)
}
