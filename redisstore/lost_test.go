package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
)

// TestEveryKeyLost deletes each key of a store in turn, as an eviction
// would, and reads and writes it every way: each call answers what it
// answered before, or fails with checkpoint.ErrDataLoss, and some call
// notices every loss; none answers fewer items or namespaces with a nil
// error, and no write makes a lost namespace index, or the registry, anew
// with only what it puts. A new Store on the prefix refuses a lost registry
// too.
func TestEveryKeyLost(t *testing.T) {
	rdb := redistest.Real(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	base := "{" + prefix + "}:"
	for _, ns := range [][]string{{"users", "a"}, {"users", "b"}} {
		for _, k := range []string{"k1", "k2", "k3"} {
			if err := s.Put(ctx, ns, k, map[string]any{"k": k, "ns": ns[1]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The calls, in this order, each answering what it read as JSON; the
	// writes put back what they change, so that every call meets the same
	// store (a Delete of a lost item deletes what is left of it: last).
	type call struct {
		name string
		do   func() (any, error)
	}
	calls := []call{
		{"get", func() (any, error) {
			it, err := s.Get(ctx, []string{"users", "a"}, "k2")
			if it == nil {
				return nil, err
			}
			return it.Value, err
		}},
		{"search", func() (any, error) {
			items, err := s.Search(ctx, []string{"users"}, redisstore.SearchOptions{Limit: 100})
			var keys []string
			for _, it := range items {
				keys = append(keys, strings.Join(it.Namespace, "/")+"/"+it.Key)
			}
			slices.Sort(keys)
			return keys, err
		}},
		{"list namespaces", func() (any, error) {
			return s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{})
		}},
		{"put", func() (any, error) {
			err := s.Put(ctx, []string{"users", "a"}, "k9", map[string]any{"k": "k9"})
			if err == nil {
				err = s.Delete(ctx, []string{"users", "a"}, "k9")
			}
			return nil, err
		}},
		{"delete", func() (any, error) {
			err := s.Delete(ctx, []string{"users", "b"}, "k1")
			if err == nil {
				err = s.Put(ctx, []string{"users", "b"}, "k1", map[string]any{"k": "k1", "ns": "b"})
			}
			return nil, err
		}},
	}
	run := func() (map[string]string, map[string]error) {
		out, errs := map[string]string{}, map[string]error{}
		for _, c := range calls {
			v, err := c.do()
			j, _ := json.Marshal(v)
			out[c.name], errs[c.name] = string(j), err
		}
		return out, errs
	}
	before, errs := run()
	for name, err := range errs {
		if err != nil {
			t.Fatalf("%s on the sound store: %v", name, err)
		}
	}
	keys, err := rdb.Keys(ctx, base+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	n := 0
	for _, k := range keys {
		if strings.HasSuffix(k, ":meta") {
			continue // TestMetaKeyLost
		}
		t.Run(strings.TrimPrefix(k, base), func(t *testing.T) {
			defer redistest.LoseKey(t, rdb, k)()
			out, errs := run()
			redistest.JudgeLoss(t, k, before, out, errs)
			if strings.HasSuffix(k, "}:ns") {
				if _, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: prefix}); !errors.Is(err, checkpoint.ErrDataLoss) {
					t.Errorf("New on a prefix that lost its registry: %v, want ErrDataLoss", err)
				}
			}
			n++
		})
	}
	if n < 5 {
		t.Errorf("only %d keys tried", n)
	}
}

// TestExpiredIsNotLost: items whose TTL ran out (their hashes gone, their
// index entries still there until a sweep) read as absent, never as lost
// data, through every call.
func TestExpiredIsNotLost(t *testing.T) {
	rdb := redistest.Real(t)
	ctx := context.Background()
	s, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if err := s.Put(ctx, []string{"t", "x"}, k, map[string]any{"k": k}, redisstore.WithTTL(20*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, []string{"t", "y"}, "k", map[string]any{"k": "y"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	if _, err := s.Get(ctx, []string{"t", "x"}, "k2"); !errors.Is(err, redisstore.ErrNotFound) {
		t.Errorf("Get of an expired item: %v, want ErrNotFound", err)
	}
	for _, limit := range []int{1, 100} {
		items, err := s.Search(ctx, []string{"t"}, redisstore.SearchOptions{Limit: limit})
		if err != nil || len(items) != 1 || items[0].Key != "k" {
			t.Errorf("Search (limit %d) after expiry: %v %v", limit, items, err)
		}
	}
	if nss, err := s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{}); err != nil || len(nss) != 1 {
		t.Errorf("ListNamespaces after expiry: %v %v", nss, err)
	}
	if err := s.Put(ctx, []string{"t", "x"}, "k4", map[string]any{"k": "k4"}); err != nil {
		t.Errorf("Put after expiry: %v", err)
	}
}

// TestRegistryMarkerAdded: a prefix written before the registry had its
// marker (a meta key without the field "registry") gets the marker and the
// field from New, and reads as before.
func TestRegistryMarkerAdded(t *testing.T) {
	rdb := redistest.Real(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	base := "{" + prefix + "}:"
	s, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, []string{"a"}, "k", map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	// As an earlier version left it.
	if err := rdb.HDel(ctx, base+"meta", "registry").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZRem(ctx, base+"ns", "").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, []string{"a"}, "k"); !errors.Is(err, checkpoint.ErrDataLoss) {
		t.Errorf("Get without the marker: %v, want ErrDataLoss (New adds it)", err)
	}
	s, err = redisstore.New(ctx, rdb, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if it, err := s.Get(ctx, []string{"a"}, "k"); err != nil || fmt.Sprint(it.Value["x"]) != "1" {
		t.Errorf("Get after New: %v %v", it, err)
	}
	if nss, err := s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{}); err != nil || len(nss) != 1 {
		t.Errorf("ListNamespaces after New: %v %v", nss, err)
	}
	if v := rdb.HGet(ctx, base+"meta", "registry").Val(); v != "marked" {
		t.Errorf("meta field registry %q", v)
	}
}
