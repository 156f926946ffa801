package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redisstore"
)

type ns = []string

// store returns a plain store: no TTL, no embedder.
func store(t *testing.T, e Env) *redisstore.Store {
	t.Helper()
	return e.New(t, redisstore.Options{})
}

func put(t *testing.T, s *redisstore.Store, n ns, key string, value map[string]any, opts ...redisstore.PutOption) {
	t.Helper()
	if err := s.Put(testctx.Context(t), n, key, value, opts...); err != nil {
		t.Fatalf("Put(%q, %q): %v", n, key, err)
	}
}

// get is Python's get: nil for an absent item, fatal on other errors.
func get(t *testing.T, s *redisstore.Store, n ns, key string, opts ...redisstore.GetOption) *redisstore.Item {
	t.Helper()
	it, err := s.Get(testctx.Context(t), n, key, opts...)
	if errors.Is(err, redisstore.ErrNotFound) {
		if it != nil {
			t.Fatalf("Get(%q, %q) returned an item with ErrNotFound", n, key)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", n, key, err)
	}
	if it == nil {
		t.Fatalf("Get(%q, %q) returned (nil, nil)", n, key)
	}
	return it
}

func del(t *testing.T, s *redisstore.Store, n ns, key string) {
	t.Helper()
	if err := s.Delete(testctx.Context(t), n, key); err != nil {
		t.Fatalf("Delete(%q, %q): %v", n, key, err)
	}
}

func search(t *testing.T, s *redisstore.Store, prefix ns, o redisstore.SearchOptions) []redisstore.SearchItem {
	t.Helper()
	got, err := s.Search(testctx.Context(t), prefix, o)
	if err != nil {
		t.Fatalf("Search(%q, %+v): %v", prefix, o, err)
	}
	return got
}

func list(t *testing.T, s *redisstore.Store, o redisstore.ListNamespacesOptions) [][]string {
	t.Helper()
	got, err := s.ListNamespaces(testctx.Context(t), o)
	if err != nil {
		t.Fatalf("ListNamespaces(%+v): %v", o, err)
	}
	return got
}

func batch(t *testing.T, s *redisstore.Store, ops ...redisstore.Op) []redisstore.Result {
	t.Helper()
	got, err := s.Batch(testctx.Context(t), ops)
	if err != nil {
		t.Fatalf("Batch: %v", err)
	}
	if len(got) != len(ops) {
		t.Fatalf("Batch returned %d results for %d ops", len(got), len(ops))
	}
	return got
}

// keysOf returns the keys of the items, in order.
func keysOf(items []redisstore.SearchItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

func score(t *testing.T, it redisstore.SearchItem) float64 {
	t.Helper()
	if it.Score == nil {
		t.Fatalf("item %q has no score", it.Key)
	}
	return *it.Score
}

func wantKeys(t *testing.T, what string, items []redisstore.SearchItem, want ...string) {
	t.Helper()
	if got := keysOf(items); !slices.Equal(got, want) {
		t.Fatalf("%s: keys %q, want %q", what, got, want)
	}
}

func wantSameKeys(t *testing.T, what string, items []redisstore.SearchItem, want ...string) {
	t.Helper()
	got := keysOf(items)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: keys %q, want %q (any order)", what, got, want)
	}
}

func wantLen[E any](t *testing.T, what string, got []E, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d results, want %d: %v", what, len(got), n, got)
	}
}

func wantErr(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: error %v, want %v", what, err, sentinel)
	}
}

func wantNamespaces(t *testing.T, what string, got [][]string, want ...[]string) {
	t.Helper()
	if want == nil {
		want = [][]string{}
	}
	if got == nil {
		got = [][]string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %q, want %q", what, got, want)
	}
}

func wantSameNamespaces(t *testing.T, what string, got [][]string, want ...[]string) {
	t.Helper()
	got = slices.Clone(got)
	want = slices.Clone(want)
	slices.SortFunc(got, slices.Compare)
	slices.SortFunc(want, slices.Compare)
	wantNamespaces(t, what, got, want...)
}

// sameJSON reports whether a and b are equal as JSON values: numbers by
// value, whatever their Go types.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(normalize(a))
	jb, err2 := json.Marshal(normalize(b))
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		var f float64
		_, _ = fmt.Sscan(fmt.Sprint(x), &f)
		return f
	}
	return v
}

func wantValue(t *testing.T, what string, got, want any) {
	t.Helper()
	if !sameJSON(got, want) {
		t.Fatalf("%s: value %v, want %v", what, got, want)
	}
}

// v builds a value from key/value pairs.
func v(pairs ...any) map[string]any {
	m := make(map[string]any, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i].(string)] = pairs[i+1]
	}
	return m
}

func slicesEqual(a, b []string) bool { return slices.Equal(a, b) }

func slicesCompare(a, b []string) int { return slices.Compare(a, b) }
