package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/redisstore"
)

var listCases = []testCase{
	{"list_namespaces_basic", listBasic},
	{"list_namespaces_with_wildcards", listWildcards},
	{"list_namespaces_pagination", listPagination},
	{"list_namespaces_max_depth", listMaxDepth},
	{"list_namespaces_no_conditions", listNoConditions},
	{"list_namespaces_empty_store", listEmpty},
	{"list_namespaces_postgres", listPostgres},
	{"tuple_order", listTupleOrder},
	{"max_depth_pages_distinct", listMaxDepthPages},
}

func putNamespaces(t *testing.T, s *redisstore.Store, nss ...ns) {
	t.Helper()
	for i, n := range nss {
		put(t, s, n, fmt.Sprint("id_", i), v("data", fmt.Sprintf("value_%02d", i)))
	}
}

type lo = redisstore.ListNamespacesOptions

// test_list_namespaces_basic.
func listBasic(t *testing.T, e Env) {
	s := store(t, e)
	putNamespaces(t, s,
		ns{"a", "b", "c"}, ns{"a", "b", "d", "e"}, ns{"a", "b", "d", "i"}, ns{"a", "b", "f"}, ns{"a", "c", "f"},
		ns{"b", "a", "f"}, ns{"users", "123"}, ns{"users", "456", "settings"}, ns{"admin", "users", "789"})
	wantSameNamespaces(t, "prefix (a, b)", list(t, s, lo{Prefix: ns{"a", "b"}}),
		ns{"a", "b", "c"}, ns{"a", "b", "d", "e"}, ns{"a", "b", "d", "i"}, ns{"a", "b", "f"})
	wantSameNamespaces(t, "suffix (f)", list(t, s, lo{Suffix: ns{"f"}}),
		ns{"a", "b", "f"}, ns{"a", "c", "f"}, ns{"b", "a", "f"})
	wantSameNamespaces(t, "prefix (a) suffix (f)", list(t, s, lo{Prefix: ns{"a"}, Suffix: ns{"f"}}),
		ns{"a", "b", "f"}, ns{"a", "c", "f"})
	wantSameNamespaces(t, "max depth 3", list(t, s, lo{Prefix: ns{"a", "b"}, MaxDepth: 3}),
		ns{"a", "b", "c"}, ns{"a", "b", "d"}, ns{"a", "b", "f"})
	wantNamespaces(t, "limit 2", list(t, s, lo{Prefix: ns{"a", "b"}, Limit: 2}),
		ns{"a", "b", "c"}, ns{"a", "b", "d", "e"})
	wantNamespaces(t, "offset 2", list(t, s, lo{Prefix: ns{"a", "b"}, Offset: 2}),
		ns{"a", "b", "d", "i"}, ns{"a", "b", "f"})
	wantSameNamespaces(t, "prefix (a, *, f)", list(t, s, lo{Prefix: ns{"a", "*", "f"}}),
		ns{"a", "b", "f"}, ns{"a", "c", "f"})
	wantSameNamespaces(t, "suffix (*, f)", list(t, s, lo{Suffix: ns{"*", "f"}}),
		ns{"a", "b", "f"}, ns{"a", "c", "f"}, ns{"b", "a", "f"})
	wantNamespaces(t, "nonexistent", list(t, s, lo{Prefix: ns{"nonexistent"}}))
	wantNamespaces(t, "prefix (users, 123)", list(t, s, lo{Prefix: ns{"users", "123"}}), ns{"users", "123"})
}

// test_list_namespaces_with_wildcards.
func listWildcards(t *testing.T, e Env) {
	s := store(t, e)
	putNamespaces(t, s, ns{"users", "123"}, ns{"users", "456"}, ns{"users", "789", "settings"},
		ns{"admin", "users", "789"}, ns{"guests", "123"}, ns{"guests", "456", "preferences"})
	wantSameNamespaces(t, "prefix (users, *)", list(t, s, lo{Prefix: ns{"users", "*"}}),
		ns{"users", "123"}, ns{"users", "456"}, ns{"users", "789", "settings"})
	wantNamespaces(t, "suffix (*, preferences)", list(t, s, lo{Suffix: ns{"*", "preferences"}}),
		ns{"guests", "456", "preferences"})
	wantNamespaces(t, "prefix (*, users) suffix (*, settings)", list(t, s, lo{Prefix: ns{"*", "users"}, Suffix: ns{"*", "settings"}}))
	put(t, s, ns{"admin", "users", "settings", "789"}, "foo", v("data", "some_val"))
	wantNamespaces(t, "prefix (*, users) suffix (settings, *)", list(t, s, lo{Prefix: ns{"*", "users"}, Suffix: ns{"settings", "*"}}),
		ns{"admin", "users", "settings", "789"})
	// A wildcard needs a label: (*) matches no namespace shorter than one.
	wantNamespaces(t, "prefix (*, *, *, *)", list(t, s, lo{Prefix: ns{"*", "*", "*", "*"}}),
		ns{"admin", "users", "settings", "789"})
}

// test_list_namespaces_pagination.
func listPagination(t *testing.T, e Env) {
	s := store(t, e)
	for i := range 20 {
		put(t, s, ns{"namespace", fmt.Sprintf("sub_%02d", i)}, fmt.Sprintf("id_%02d", i), v("data", i))
	}
	page := func(from, to int) [][]string {
		var out [][]string
		for i := from; i < to; i++ {
			out = append(out, ns{"namespace", fmt.Sprintf("sub_%02d", i)})
		}
		return out
	}
	wantNamespaces(t, "0..5", list(t, s, lo{Prefix: ns{"namespace"}, Limit: 5}), page(0, 5)...)
	wantNamespaces(t, "5..10", list(t, s, lo{Prefix: ns{"namespace"}, Limit: 5, Offset: 5}), page(5, 10)...)
	wantNamespaces(t, "15..20", list(t, s, lo{Prefix: ns{"namespace"}, Limit: 5, Offset: 15}), page(15, 20)...)
	wantNamespaces(t, "past the end", list(t, s, lo{Prefix: ns{"namespace"}, Limit: 5, Offset: 20}))
}

// test_list_namespaces_max_depth.
func listMaxDepth(t *testing.T, e Env) {
	s := store(t, e)
	putNamespaces(t, s, ns{"a", "b", "c", "d"}, ns{"a", "b", "c", "e"}, ns{"a", "b", "f"}, ns{"a", "g"}, ns{"h", "i", "j", "k"})
	wantNamespaces(t, "max depth 2", list(t, s, lo{MaxDepth: 2}), ns{"a", "b"}, ns{"a", "g"}, ns{"h", "i"})
}

// test_list_namespaces_no_conditions.
func listNoConditions(t *testing.T, e Env) {
	s := store(t, e)
	putNamespaces(t, s, ns{"a", "b"}, ns{"c", "d"}, ns{"e", "f", "g"})
	wantNamespaces(t, "all", list(t, s, lo{}), ns{"a", "b"}, ns{"c", "d"}, ns{"e", "f", "g"})
}

// test_list_namespaces_empty_store.
func listEmpty(t *testing.T, e Env) {
	s := store(t, e)
	wantNamespaces(t, "empty store", list(t, s, lo{}))
}

// test_list_namespaces and test_batch_list_namespaces_ops (Postgres).
func listPostgres(t *testing.T, e Env) {
	s := store(t, e)
	nss := []ns{
		{"test", "documents", "public"}, {"test", "documents", "private"}, {"test", "images", "public"},
		{"test", "images", "private"}, {"prod", "documents", "public"}, {"prod", "documents", "private"},
	}
	for _, n := range nss {
		put(t, s, n, "dummy", v("content", "dummy"))
	}
	wantLen(t, "all", list(t, s, lo{}), len(nss))
	test := list(t, s, lo{Prefix: ns{"test"}})
	wantLen(t, "prefix test", test, 4)
	public := list(t, s, lo{Suffix: ns{"public"}})
	wantLen(t, "suffix public", public, 3)
	for _, n := range public {
		if n[len(n)-1] != "public" {
			t.Fatalf("suffix public gave %q", n)
		}
	}
	for _, n := range list(t, s, lo{MaxDepth: 2}) {
		if len(n) > 2 {
			t.Fatalf("max depth 2 gave %q", n)
		}
	}
	wantLen(t, "limit 3", list(t, s, lo{Limit: 3}), 3)
	for _, n := range nss {
		del(t, s, n, "dummy")
	}
	wantNamespaces(t, "after cleanup", list(t, s, lo{}))
}

// The order is that of label tuples, label by label and bytewise, whatever
// bytes the labels hold.
func listTupleOrder(t *testing.T, e Env) {
	s := store(t, e)
	nss := []ns{
		{"a"}, {"a", "b"}, {"a-x"}, {"a0"}, {"a:"}, {"a\x00"}, {"a\x00", "b"}, {"a\x00\x01"}, {"a\x01"},
		{"a", "\x00"}, {"a", "\xff"}, {"A"}, {"b"}, {"%"}, {"%25"}, {"user1"}, {"user", "x"}, {"é"}, {"z", "a", "b"},
	}
	putNamespaces(t, s, nss...)
	want := slices.Clone(nss)
	slices.SortFunc(want, slices.Compare)
	wantNamespaces(t, "all, in order", list(t, s, lo{}), want...)
	for off := 0; off < len(want); off += 4 {
		wantNamespaces(t, fmt.Sprint("page at ", off), list(t, s, lo{Limit: 4, Offset: off}), want[off:min(off+4, len(want))]...)
	}
}

func listMaxDepthPages(t *testing.T, e Env) {
	s := store(t, e)
	var nss []ns
	for i := range 6 {
		for j := range 4 {
			nss = append(nss, ns{"r", fmt.Sprint("u", i), fmt.Sprint("t", j)})
		}
	}
	putNamespaces(t, s, nss...)
	var all [][]string
	for i := range 6 {
		all = append(all, ns{"r", fmt.Sprint("u", i)})
	}
	wantNamespaces(t, "depth 2", list(t, s, lo{MaxDepth: 2}), all...)
	wantNamespaces(t, "depth 2, page 2", list(t, s, lo{MaxDepth: 2, Limit: 2, Offset: 2}), all[2:4]...)
	wantNamespaces(t, "depth 1", list(t, s, lo{MaxDepth: 1}), ns{"r"})
	wantNamespaces(t, "depth 5 leaves them whole", list(t, s, lo{MaxDepth: 5, Limit: 3}), nss[:3]...)
}
