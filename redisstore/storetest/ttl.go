package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redisstore"
)

var ttlCases = []testCase{
	{"default_ttl_expires", ttlDefault},
	{"per_item_ttl", ttlPerItem},
	{"ttl_zero_keeps_forever", ttlZero},
	{"refresh_on_get", ttlRefreshGet},
	{"refresh_on_read_defaults_on", ttlRefreshDefaultsOn},
	{"refresh_on_search", ttlRefreshSearch},
	{"update_restarts_ttl", ttlUpdate},
	{"store_ttl", ttlStoreTTL},
	{"expired_never_come_back", ttlNeverComeBack},
	{"sweep", ttlSweep},
	{"writes_sweep", ttlWritesSweep},
}

// units returns n time units.
func units(e Env, n float64) time.Duration { return time.Duration(n * float64(e.Unit)) }

func advance(t *testing.T, e Env, n float64) {
	t.Helper()
	if e.Advance == nil {
		t.Skip("Env.Advance is nil")
	}
	e.Advance(t, units(e, n))
}

func needClock(t *testing.T, e Env) {
	t.Helper()
	if e.Advance == nil {
		t.Skip("Env.Advance is nil")
	}
}

func absent(t *testing.T, s *redisstore.Store, n ns, key string) {
	t.Helper()
	if it := get(t, s, n, key, redisstore.WithRefresh(redisstore.RefreshOff)); it != nil {
		t.Fatalf("%q/%q still there", n, key)
	}
}

func present(t *testing.T, s *redisstore.Store, n ns, key string) {
	t.Helper()
	if it := get(t, s, n, key, redisstore.WithRefresh(redisstore.RefreshOff)); it == nil {
		t.Fatalf("%q/%q is gone", n, key)
	}
}

func ttlDefault(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{TTL: units(e, 2), RefreshOnRead: redisstore.RefreshOff})
	put(t, s, ns{"t", "a"}, "k", v("x", 1))
	put(t, s, ns{"t", "b"}, "k", v("x", 2), redisstore.WithTTL(units(e, 4)))
	advance(t, e, 1)
	present(t, s, ns{"t", "a"}, "k")
	advance(t, e, 1.5)
	absent(t, s, ns{"t", "a"}, "k")
	present(t, s, ns{"t", "b"}, "k")
	wantKeys(t, "search", search(t, s, ns{"t"}, redisstore.SearchOptions{}), "k")
	wantNamespaces(t, "namespaces", list(t, s, lo{}), ns{"t", "b"})
}

func ttlPerItem(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{RefreshOnRead: redisstore.RefreshOff})
	put(t, s, ns{"p", "short"}, "a", v("x", 1), redisstore.WithTTL(units(e, 2)))
	put(t, s, ns{"p", "mixed"}, "b", v("x", 2))
	put(t, s, ns{"p", "mixed"}, "c", v("x", 3), redisstore.WithTTL(units(e, 2)))
	put(t, s, ns{"p", "long"}, "d", v("x", 4), redisstore.WithTTL(units(e, 5)))
	advance(t, e, 3)
	absent(t, s, ns{"p", "short"}, "a")
	absent(t, s, ns{"p", "mixed"}, "c")
	present(t, s, ns{"p", "mixed"}, "b")
	present(t, s, ns{"p", "long"}, "d")
	wantSameKeys(t, "search", search(t, s, ns{"p"}, redisstore.SearchOptions{}), "b", "d")
	wantNamespaces(t, "namespaces", list(t, s, lo{}), ns{"p", "long"}, ns{"p", "mixed"})
	advance(t, e, 3)
	wantNamespaces(t, "namespaces later", list(t, s, lo{}), ns{"p", "mixed"})
}

func ttlZero(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{TTL: units(e, 1)})
	put(t, s, ns{"z"}, "forever", v(), redisstore.WithTTL(0))
	put(t, s, ns{"z"}, "default", v())
	advance(t, e, 3)
	present(t, s, ns{"z"}, "forever")
	absent(t, s, ns{"z"}, "default")
}

func ttlRefreshGet(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{TTL: units(e, 2), RefreshOnRead: redisstore.RefreshOn})
	put(t, s, ns{"r"}, "refreshed", v())
	put(t, s, ns{"r"}, "not", v())
	advance(t, e, 1.5)
	get(t, s, ns{"r"}, "refreshed")
	get(t, s, ns{"r"}, "not", redisstore.WithRefresh(redisstore.RefreshOff))
	advance(t, e, 1.5)
	present(t, s, ns{"r"}, "refreshed")
	absent(t, s, ns{"r"}, "not")
	wantNamespaces(t, "namespaces", list(t, s, lo{}), ns{"r"})

	// With RefreshOnRead off, only an explicit RefreshOn extends.
	s2 := e.New(t, redisstore.Options{TTL: units(e, 2), RefreshOnRead: redisstore.RefreshOff})
	put(t, s2, ns{"r"}, "on", v())
	put(t, s2, ns{"r"}, "default", v())
	advance(t, e, 1.5)
	get(t, s2, ns{"r"}, "on", redisstore.WithRefresh(redisstore.RefreshOn))
	get(t, s2, ns{"r"}, "default")
	advance(t, e, 1.5)
	present(t, s2, ns{"r"}, "on")
	absent(t, s2, ns{"r"}, "default")
}

// refresh_on_read defaults to true in LangGraph: so does RefreshOnRead.
func ttlRefreshDefaultsOn(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{TTL: units(e, 2)})
	put(t, s, ns{"d"}, "got", v())
	put(t, s, ns{"d", "x"}, "searched", v())
	put(t, s, ns{"d", "y"}, "not", v())
	advance(t, e, 1.5)
	get(t, s, ns{"d"}, "got")
	wantKeys(t, "search", search(t, s, ns{"d", "x"}, redisstore.SearchOptions{}), "searched")
	advance(t, e, 1.5)
	present(t, s, ns{"d"}, "got")
	present(t, s, ns{"d", "x"}, "searched")
	absent(t, s, ns{"d", "y"}, "not")
}

func ttlRefreshSearch(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{TTL: units(e, 2)})
	for _, k := range []string{"a", "b", "c"} {
		put(t, s, ns{"s"}, k, v("k", k))
	}
	advance(t, e, 1.5)
	// Only the page returned is refreshed: "c" (newest) and "b".
	wantKeys(t, "page", search(t, s, ns{"s"}, redisstore.SearchOptions{Limit: 2, RefreshTTL: redisstore.RefreshOn}), "c", "b")
	search(t, s, ns{"s"}, redisstore.SearchOptions{RefreshTTL: redisstore.RefreshOff})
	advance(t, e, 1.5)
	wantKeys(t, "after", search(t, s, ns{"s"}, redisstore.SearchOptions{}), "c", "b")
	absent(t, s, ns{"s"}, "a")
}

func ttlUpdate(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{TTL: units(e, 2)})
	put(t, s, ns{"u"}, "k", v("x", 1))
	advance(t, e, 1.5)
	put(t, s, ns{"u"}, "k", v("x", 2))
	advance(t, e, 1.5)
	present(t, s, ns{"u"}, "k")
	// An update without a TTL makes the item permanent.
	put(t, s, ns{"u"}, "k", v("x", 3), redisstore.WithTTL(0))
	advance(t, e, 3)
	present(t, s, ns{"u"}, "k")
	wantNamespaces(t, "namespaces", list(t, s, lo{}), ns{"u"})
}

// test_store_ttl (Postgres), in units: TTL 3, reads at 2, 4, 6 and 8.5.
func ttlStoreTTL(t *testing.T, e Env) {
	needClock(t, e)
	s := e.New(t, redisstore.Options{TTL: units(e, 3), RefreshOnRead: redisstore.RefreshOn})
	n := ns{"foo"}
	put(t, s, n, "item1", v("foo", "bar"))
	advance(t, e, 2)
	if get(t, s, n, "item1", redisstore.WithRefresh(redisstore.RefreshOn)) == nil {
		t.Fatal("gone at 2")
	}
	advance(t, e, 2)
	wantLen(t, "search at 4", search(t, s, n, redisstore.SearchOptions{RefreshTTL: redisstore.RefreshOn}), 1)
	advance(t, e, 2)
	if get(t, s, n, "item1", redisstore.WithRefresh(redisstore.RefreshOff)) == nil {
		t.Fatal("gone at 6")
	}
	advance(t, e, 2.5)
	wantLen(t, "search at 8.5", search(t, s, n, redisstore.SearchOptions{RefreshTTL: redisstore.RefreshOff}), 0)
}

// Expired items never come back, from any read, before any sweep.
func ttlNeverComeBack(t *testing.T, e Env) {
	needClock(t, e)
	emb := hashing(t)
	s := e.New(t, redisstore.Options{Embedder: emb, Dims: emb.Dims()})
	for i := range 12 {
		o := []redisstore.PutOption{redisstore.WithTTL(units(e, 1))}
		if i%3 == 0 {
			o = nil
		}
		put(t, s, ns{"e", fmt.Sprint(i % 4)}, fmt.Sprint("k", i), v("text", fmt.Sprint("memory number ", i), "i", i), o...)
	}
	advance(t, e, 2)
	want := []string{"k9", "k6", "k3", "k0"}
	wantKeys(t, "search", search(t, s, ns{"e"}, redisstore.SearchOptions{}), want...)
	wantKeys(t, "search with a filter", search(t, s, ns{"e"}, redisstore.SearchOptions{Filter: v("i", v("$gte", 0))}), want...)
	wantSameKeys(t, "search with a query", search(t, s, ns{"e"}, redisstore.SearchOptions{Query: "memory number"}), want...)
	wantNamespaces(t, "namespaces", list(t, s, lo{}), ns{"e", "0"}, ns{"e", "1"}, ns{"e", "2"}, ns{"e", "3"})
}

func ttlSweep(t *testing.T, e Env) {
	needClock(t, e)
	s := store(t, e)
	for i := range 5 {
		put(t, s, ns{"gone", fmt.Sprint(i % 2)}, fmt.Sprint("k", i), v(), redisstore.WithTTL(units(e, 1)))
	}
	put(t, s, ns{"kept"}, "k", v())
	put(t, s, ns{"kept"}, "short", v(), redisstore.WithTTL(units(e, 1)))
	advance(t, e, 2)
	n, err := s.Sweep(testctx.Context(t))
	if err != nil || n != 6 {
		t.Fatalf("Sweep = %d, %v; want 6", n, err)
	}
	if n, err := s.Sweep(testctx.Context(t)); err != nil || n != 0 {
		t.Fatalf("second Sweep = %d, %v; want 0", n, err)
	}
	wantNamespaces(t, "namespaces", list(t, s, lo{}), ns{"kept"})
	wantKeys(t, "search", search(t, s, nil, redisstore.SearchOptions{}), "k")
}

func ttlWritesSweep(t *testing.T, e Env) {
	needClock(t, e)
	s := store(t, e)
	for i := range 3 {
		put(t, s, ns{"w", fmt.Sprint(i)}, "k", v(), redisstore.WithTTL(units(e, 1)))
	}
	advance(t, e, 2)
	put(t, s, ns{"other"}, "k", v())
	if n, err := s.Sweep(testctx.Context(t)); err != nil || n != 0 {
		t.Fatalf("Sweep after a write = %d, %v; want 0 (the write swept)", n, err)
	}
}
