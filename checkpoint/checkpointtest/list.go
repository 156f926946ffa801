package checkpointtest

import (
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

// listCases is the LIST group (contract §4.4, P-LS-01..16) plus the optional
// global search P-LS-X1. Every list call of the Python suite carries
// checkpoint_ns "", so it is root-only: q(T, "").
var listCases = []testCase[checkpoint.Saver]{
	base("list_all", listAll),
	base("list_by_thread", listByThread),
	base("list_by_namespace", listByNamespace),
	base("list_ordering", listOrdering),
	base("list_metadata_filter_single_key", listFiltered(checkpoint.Metadata{"source": "input"}, 2)),
	base("list_metadata_filter_step", listFiltered(checkpoint.Metadata{"step": 1}, 1)),
	base("list_metadata_filter_multiple_keys", listMetadataFilterMultipleKeys),
	base("list_metadata_filter_no_match", listFiltered(checkpoint.Metadata{"source": "update", "step": 99}, 0)),
	base("list_metadata_custom_keys", listMetadataCustomKeys),
	base("list_before", listBefore),
	base("list_limit", listLimit),
	base("list_limit_plus_before", listLimitPlusBefore),
	base("list_combined_thread_and_filter", listFiltered(checkpoint.Metadata{"source": "loop"}, 2)),
	base("list_empty_result", listEmptyResult),
	base("list_includes_pending_writes", listIncludesPendingWrites),
	base("list_multiple_namespaces", listMultipleNamespaces),
	base("list_global_search", listGlobalSearch),
}

// listData is the fixture _setup_list_data: 4 chained checkpoints on a fresh
// thread, source "input" for even steps and "loop" for odd ones.
type listData struct {
	tid string
	ids []string
}

func setupListData(t *testing.T, s checkpoint.Saver) listData {
	t.Helper()
	tid := newUUID()
	stored := chain(t, s, tid, "", 4, func(i int) checkpoint.Metadata {
		if i%2 == 0 {
			return md("input", i)
		}
		return md("loop", i)
	})
	return listData{tid: tid, ids: configIDs(stored)}
}

// P-LS-01
func listAll(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	wantLen(t, "list", list(t, s, q(d.tid, "")), 4)
}

// P-LS-02
func listByThread(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	wantLen(t, "list of a fresh thread", list(t, s, q(newUUID(), "")), 0)
	wantLen(t, "list of the fixture thread", list(t, s, q(d.tid, "")), 4)
}

// P-LS-03: an explicit "" must not include child namespaces.
func listByNamespace(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	put(t, s, cfg(tid, ""), emptyCP(), defaultMD(), nil)
	put(t, s, cfg(tid, "child:1"), emptyCP(), defaultMD(), nil)
	wantLen(t, `list ns ""`, list(t, s, q(tid, "")), 1)
	wantLen(t, `list ns "child:1"`, list(t, s, q(tid, "child:1")), 1)
}

// P-LS-04
func listOrdering(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	wantIDs(t, "list", idsOf(list(t, s, q(d.tid, ""))), []string{d.ids[3], d.ids[2], d.ids[1], d.ids[0]})
}

// listFiltered covers the fixture-based filter cases P-LS-05 (source
// input: 2), P-LS-06 (step 1: 1), P-LS-08 (no match: 0) and P-LS-13 (source
// loop: 2): the result count, and every result's metadata matches each
// filter key.
func listFiltered(filter checkpoint.Metadata, n int) func(t *testing.T, s checkpoint.Saver) {
	return func(t *testing.T, s checkpoint.Saver) {
		d := setupListData(t, s)
		query := q(d.tid, "")
		query.Filter = filter
		got := list(t, s, query)
		wantLen(t, "filtered list", got, n)
		for _, tp := range got {
			for k, v := range filter {
				wantValue(t, "metadata "+k, tp.Metadata[k], v)
			}
		}
	}
}

// P-LS-07: AND semantics over unchained checkpoints.
func listMetadataFilterMultipleKeys(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	put(t, s, cfg(tid, ""), emptyCP(), md("input", 1), nil)
	put(t, s, cfg(tid, ""), emptyCP(), md("loop", 1), nil)
	put(t, s, cfg(tid, ""), emptyCP(), md("input", 2), nil)
	query := q(tid, "")
	query.Filter = checkpoint.Metadata{"source": "input", "step": 2}
	got := list(t, s, query)
	wantLen(t, "filtered list", got, 1)
	wantValue(t, "metadata source", got[0].Metadata["source"], "input")
	wantValue(t, "metadata step", got[0].Metadata["step"], 2)
}

// P-LS-09
func listMetadataCustomKeys(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0, "score", 42, "run_id", "run-abc"), nil)
	put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0, "score", 99, "run_id", "run-xyz"), nil)
	query := q(tid, "")
	query.Filter = checkpoint.Metadata{"score": 42}
	got := list(t, s, query)
	wantLen(t, "filtered list", got, 1)
	wantValue(t, "metadata score", got[0].Metadata["score"], 42)
	wantValue(t, "metadata run_id", got[0].Metadata["run_id"], "run-abc")
}

// P-LS-10: strict "<" on the ID.
func listBefore(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	query := q(d.tid, "")
	query.Before = d.ids[2]
	got := idsOf(list(t, s, query))
	slices.Sort(got)
	want := []string{d.ids[0], d.ids[1]}
	slices.Sort(want)
	wantIDs(t, "list before ids[2] (as a set)", got, want)
}

// P-LS-11
func listLimit(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	for _, n := range []int{1, 2} {
		query := q(d.tid, "")
		query.Limit = n
		wantLen(t, "limited list", list(t, s, query), n)
	}
}

// P-LS-12: the limit applies after ordering newest first.
func listLimitPlusBefore(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	query := q(d.tid, "")
	query.Before, query.Limit = d.ids[3], 1
	wantIDs(t, "list before ids[3] limit 1", idsOf(list(t, s, query)), []string{d.ids[2]})
}

// P-LS-14
func listEmptyResult(t *testing.T, s checkpoint.Saver) {
	query := q(newUUID(), "")
	query.Filter = checkpoint.Metadata{"source": "nonexistent"}
	wantLen(t, "list", list(t, s, query), 0)
}

// P-LS-15
func listIncludesPendingWrites(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	c := put(t, s, cfg(tid, ""), emptyCP(), defaultMD(), nil)
	putWrites(t, s, c, newUUID(), w("ch", "val"))
	got := list(t, s, q(tid, ""))
	wantLen(t, "list", got, 1)
	wantSingleWrite(t, got[0], "ch", "val")
}

// P-LS-16
func listMultipleNamespaces(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	for _, ns := range []string{"", "child:1", "child:2"} {
		put(t, s, cfg(tid, ns), emptyCP(), defaultMD(), nil)
	}
	wantLen(t, `list ns ""`, list(t, s, q(tid, "")), 1)
}

// P-LS-X1 (optional in Python, required here): ThreadID "" searches every
// thread (alist(None, ...)).
func listGlobalSearch(t *testing.T, s checkpoint.Saver) {
	marker := newUUID()
	t1, t2 := newUUID(), newUUID()
	put(t, s, cfg(t1, ""), emptyCP(), md("input", 0, "marker", marker), nil)
	put(t, s, cfg(t2, ""), emptyCP(), md("loop", 0, "marker", marker), nil)
	got := list(t, s, checkpoint.ListQuery{Filter: checkpoint.Metadata{"source": "input", "marker": marker}})
	wantLen(t, "global list of source input", got, 1)
	if got[0].Config.ThreadID != t1 {
		t.Fatalf("thread = %q, want %q", got[0].Config.ThreadID, t1)
	}
	wantLen(t, "global list of the marker", list(t, s, checkpoint.ListQuery{Filter: checkpoint.Metadata{"marker": marker}}), 2)
}
