package storetest

import (
	"testing"

	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redisstore"
)

var batchCases = []testCase{
	{"batch_order", batchOrder},
	{"batch_get_ops", batchGetOps},
	{"batch_put_ops", batchPutOps},
	{"batch_search_ops", batchSearch},
	{"batch_list_namespaces_ops", batchListNamespaces},
	{"reads_see_the_store_before_the_writes", batchReadsBeforeWrites},
	{"last_write_wins", batchLastWriteWins},
	{"invalid_op_writes_nothing", batchInvalidOp},
	{"empty", batchEmpty},
}

// test_batch_order (Postgres).
func batchOrder(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"test", "foo"}, "key1", v("data", "value1"))
	put(t, s, ns{"test", "bar"}, "key2", v("data", "value2"))
	res := batch(t, s,
		redisstore.GetOp{Namespace: ns{"test", "foo"}, Key: "key1"},
		redisstore.PutOp{Namespace: ns{"test", "bar"}, Key: "key2", Value: v("data", "value2")},
		redisstore.SearchOp{NamespacePrefix: ns{"test"}, Options: redisstore.SearchOptions{Filter: v("data", "value1")}},
		redisstore.ListNamespacesOp{Options: lo{Limit: 10}},
		redisstore.GetOp{Namespace: ns{"test"}, Key: "key3"},
	)
	if res[0].Item == nil || res[0].Item.Key != "key1" {
		t.Fatalf("result 0: %+v", res[0])
	}
	wantValue(t, "result 0", res[0].Item.Value, v("data", "value1"))
	if res[1].Item != nil || res[1].Items != nil || res[1].Namespaces != nil {
		t.Fatalf("a put has a result: %+v", res[1])
	}
	wantLen(t, "result 2", res[2].Items, 1)
	if len(res[3].Namespaces) == 0 {
		t.Fatal("result 3: no namespaces")
	}
	if res[4].Item != nil {
		t.Fatalf("result 4: %+v", res[4].Item)
	}

	res = batch(t, s,
		redisstore.SearchOp{NamespacePrefix: ns{"test"}, Options: redisstore.SearchOptions{Limit: 5}},
		redisstore.GetOp{Namespace: ns{"test", "bar"}, Key: "key2"},
		redisstore.ListNamespacesOp{Options: lo{Limit: 5}},
		redisstore.PutOp{Namespace: ns{"test"}, Key: "key3", Value: v("data", "value3")},
		redisstore.GetOp{Namespace: ns{"test", "foo"}, Key: "key1"},
	)
	if len(res[0].Items) < 2 {
		t.Fatalf("result 0: %d items", len(res[0].Items))
	}
	if res[1].Item == nil || res[1].Item.Key != "key2" {
		t.Fatalf("result 1: %+v", res[1])
	}
	wantValue(t, "result 1", res[1].Item.Value, v("data", "value2"))
	if len(res[2].Namespaces) == 0 {
		t.Fatal("result 2: no namespaces")
	}
	if res[4].Item == nil || res[4].Item.Key != "key1" {
		t.Fatalf("result 4: %+v", res[4])
	}
	if get(t, s, ns{"test"}, "key3") == nil {
		t.Fatal("the batch's put did not land")
	}
}

// test_batch_get_ops.
func batchGetOps(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"test"}, "key1", v("data", "value1"))
	put(t, s, ns{"test"}, "key2", v("data", "value2"))
	res := batch(t, s,
		redisstore.GetOp{Namespace: ns{"test"}, Key: "key1"},
		redisstore.GetOp{Namespace: ns{"test"}, Key: "key2"},
		redisstore.GetOp{Namespace: ns{"test"}, Key: "key3"},
		redisstore.GetOp{Namespace: ns{"test"}, Key: "key1", RefreshTTL: redisstore.RefreshOn},
	)
	if res[0].Item == nil || res[0].Item.Key != "key1" || res[1].Item == nil || res[1].Item.Key != "key2" {
		t.Fatalf("results %+v %+v", res[0].Item, res[1].Item)
	}
	if res[2].Item != nil {
		t.Fatal("missing key found")
	}
	if res[3].Item == nil || !res[3].Item.UpdatedAt.Equal(res[0].Item.UpdatedAt) {
		t.Fatalf("result 3: %+v", res[3].Item)
	}
}

// test_batch_put_ops: a PutOp with value None is a DeleteOp here.
func batchPutOps(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"test"}, "key3", v("data", "old"))
	res := batch(t, s,
		redisstore.PutOp{Namespace: ns{"test"}, Key: "key1", Value: v("data", "value1")},
		redisstore.PutOp{Namespace: ns{"test"}, Key: "key2", Value: v("data", "value2")},
		redisstore.DeleteOp{Namespace: ns{"test"}, Key: "key3"},
	)
	for i, r := range res {
		if r.Item != nil || r.Items != nil || r.Namespaces != nil {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	wantValue(t, "key1", get(t, s, ns{"test"}, "key1").Value, v("data", "value1"))
	wantValue(t, "key2", get(t, s, ns{"test"}, "key2").Value, v("data", "value2"))
	if get(t, s, ns{"test"}, "key3") != nil {
		t.Fatal("key3 not deleted")
	}
}

// test_batch_search_ops.
func batchSearch(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"test", "foo"}, "key1", v("data", "value1", "tag", "a"))
	put(t, s, ns{"test", "bar"}, "key2", v("data", "value2", "tag", "a"))
	put(t, s, ns{"test", "baz"}, "key3", v("data", "value3", "tag", "b"))
	res := batch(t, s,
		redisstore.SearchOp{NamespacePrefix: ns{"test"}, Options: redisstore.SearchOptions{Filter: v("tag", "a")}},
		redisstore.SearchOp{NamespacePrefix: ns{"test"}, Options: redisstore.SearchOptions{Limit: 2}},
		redisstore.SearchOp{NamespacePrefix: ns{"test", "foo"}},
	)
	wantSameKeys(t, "tag a", res[0].Items, "key1", "key2")
	wantKeys(t, "limit 2, newest first", res[1].Items, "key3", "key2")
	wantKeys(t, "test/foo", res[2].Items, "key1")
}

// test_batch_list_namespaces_ops.
func batchListNamespaces(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"test", "documents", "public"}, "doc1", v("content", "public doc"))
	put(t, s, ns{"test", "documents", "private"}, "doc2", v("content", "private doc"))
	put(t, s, ns{"test", "images", "public"}, "img1", v("content", "public image"))
	put(t, s, ns{"prod", "documents", "public"}, "doc3", v("content", "prod doc"))
	res := batch(t, s,
		redisstore.ListNamespacesOp{Options: lo{Limit: 10}},
		redisstore.ListNamespacesOp{Options: lo{MaxDepth: 2, Limit: 10}},
		redisstore.ListNamespacesOp{Options: lo{Suffix: ns{"public"}, Limit: 10}},
	)
	wantLen(t, "all", res[0].Namespaces, 4)
	wantNamespaces(t, "depth 2", res[1].Namespaces, ns{"prod", "documents"}, ns{"test", "documents"}, ns{"test", "images"})
	wantNamespaces(t, "suffix public", res[2].Namespaces,
		ns{"prod", "documents", "public"}, ns{"test", "documents", "public"}, ns{"test", "images", "public"})
}

func batchReadsBeforeWrites(t *testing.T, e Env) {
	s := store(t, e)
	put(t, s, ns{"r"}, "old", v("x", 1))
	res := batch(t, s,
		redisstore.PutOp{Namespace: ns{"r"}, Key: "new", Value: v("x", 2)},
		redisstore.DeleteOp{Namespace: ns{"r"}, Key: "old"},
		redisstore.GetOp{Namespace: ns{"r"}, Key: "old"},
		redisstore.GetOp{Namespace: ns{"r"}, Key: "new"},
		redisstore.SearchOp{NamespacePrefix: ns{"r"}},
		redisstore.ListNamespacesOp{Options: lo{Prefix: ns{"r"}}},
	)
	if res[2].Item == nil || res[3].Item != nil {
		t.Fatalf("gets saw the batch's writes: old %+v, new %+v", res[2].Item, res[3].Item)
	}
	wantKeys(t, "search", res[4].Items, "old")
	wantNamespaces(t, "namespaces", res[5].Namespaces, ns{"r"})
	if get(t, s, ns{"r"}, "old") != nil || get(t, s, ns{"r"}, "new") == nil {
		t.Fatal("the batch's writes did not land")
	}
}

// test_async_batch_store_deduplication: the last write of an item wins.
func batchLastWriteWins(t *testing.T, e Env) {
	s := store(t, e)
	batch(t, s,
		redisstore.PutOp{Namespace: ns{"test"}, Key: "key", Value: v("value", 1)},
		redisstore.PutOp{Namespace: ns{"test"}, Key: "key", Value: v("value", 2)},
		redisstore.PutOp{Namespace: ns{"test"}, Key: "gone", Value: v("value", 3)},
		redisstore.DeleteOp{Namespace: ns{"test"}, Key: "gone"},
		redisstore.DeleteOp{Namespace: ns{"test"}, Key: "back"},
		redisstore.PutOp{Namespace: ns{"test"}, Key: "back", Value: v("value", 4)},
	)
	wantValue(t, "key", get(t, s, ns{"test"}, "key").Value, v("value", 2))
	if get(t, s, ns{"test"}, "gone") != nil {
		t.Fatal("a put followed by a delete left the item")
	}
	wantValue(t, "back", get(t, s, ns{"test"}, "back").Value, v("value", 4))
	got := search(t, s, ns{"test"}, redisstore.SearchOptions{Filter: v("value", 2)})
	wantKeys(t, "search value 2", got, "key")
}

func batchInvalidOp(t *testing.T, e Env) {
	s := store(t, e)
	_, err := s.Batch(testctx.Context(t), []redisstore.Op{
		redisstore.PutOp{Namespace: ns{"ok"}, Key: "k", Value: v("x", 1)},
		redisstore.PutOp{Namespace: ns{"bad", ""}, Key: "k", Value: v("x", 1)},
	})
	wantErr(t, "batch with a bad namespace", err, redisstore.ErrInvalidNamespace)
	_, err = s.Batch(testctx.Context(t), []redisstore.Op{
		redisstore.PutOp{Namespace: ns{"ok"}, Key: "k", Value: v("x", 1)},
		redisstore.SearchOp{Options: redisstore.SearchOptions{Filter: v("x", v("$nope", 1))}},
	})
	wantErr(t, "batch with a bad filter", err, redisstore.ErrInvalidFilter)
	_, err = s.Batch(testctx.Context(t), []redisstore.Op{nil})
	wantErr(t, "batch with a nil op", err, redisstore.ErrInvalidArgument)
	if get(t, s, ns{"ok"}, "k") != nil {
		t.Fatal("a refused batch wrote its valid put")
	}
}

func batchEmpty(t *testing.T, e Env) {
	s := store(t, e)
	if res := batch(t, s); len(res) != 0 {
		t.Fatalf("empty batch: %v", res)
	}
}
