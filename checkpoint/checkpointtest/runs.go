package checkpointtest

import (
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// deleteForRunsCases is the DELETE_FOR_RUNS group (contract §4.6,
// P-DFR-01..07), run when the saver implements checkpoint.RunDeleter.
var deleteForRunsCases = []testCase[checkpoint.RunDeleter]{
	{"delete_for_runs_single", deleteForRunsSingle},
	{"delete_for_runs_multiple", deleteForRunsMultiple},
	{"delete_for_runs_preserves_other_runs", deleteForRunsPreservesOtherRuns},
	{"delete_for_runs_removes_writes", deleteForRunsRemovesWrites},
	{"delete_for_runs_empty_list_noop", deleteForRunsEmptyListNoop},
	{"delete_for_runs_nonexistent_noop", deleteForRunsNonexistentNoop},
	{"delete_for_runs_across_namespaces", deleteForRunsAcrossNamespaces},
}

// putRun is put_run(T, run_id, ns, parent): a checkpoint with
// MD(run_id=runID), the child of parent when parent is non-nil.
func putRun(t *testing.T, s checkpoint.Saver, tid, runID, ns string, parent *checkpoint.Config) checkpoint.Config {
	t.Helper()
	c := cfg(tid, ns)
	if parent != nil {
		c = childOf(*parent)
	}
	return put(t, s, c, emptyCP(), md("loop", 0, "run_id", runID), nil)
}

// deleteForRuns calls DeleteForRuns and fails the test on error.
func deleteForRuns(t *testing.T, d checkpoint.RunDeleter, runIDs ...string) {
	t.Helper()
	if err := d.DeleteForRuns(testctx.Context(t), runIDs); err != nil {
		t.Fatalf("DeleteForRuns(%q): %v", runIDs, err)
	}
}

// wantRuns fails unless the run IDs listed for query include every run of
// present and none of absent.
func wantRuns(t *testing.T, s checkpoint.Saver, query checkpoint.ListQuery, present, absent []string) {
	t.Helper()
	got := runIDs(list(t, s, query))
	for _, r := range present {
		if !slices.Contains(got, r) {
			t.Fatalf("run %q missing from listed runs %q", r, got)
		}
	}
	for _, r := range absent {
		if slices.Contains(got, r) {
			t.Fatalf("run %q still listed (%q)", r, got)
		}
	}
}

// P-DFR-01: the child survives although its parent was deleted.
func deleteForRunsSingle(t *testing.T, s checkpoint.Saver, d checkpoint.RunDeleter) {
	tid, r1, r2 := newUUID(), newUUID(), newUUID()
	s1 := putRun(t, s, tid, r1, "", nil)
	putRun(t, s, tid, r2, "", &s1)
	wantRuns(t, s, q(tid, ""), []string{r1, r2}, nil)
	deleteForRuns(t, d, r1)
	wantRuns(t, s, q(tid, ""), []string{r2}, []string{r1})
}

// P-DFR-02
func deleteForRunsMultiple(t *testing.T, s checkpoint.Saver, d checkpoint.RunDeleter) {
	tid, r1, r2, r3 := newUUID(), newUUID(), newUUID(), newUUID()
	s1 := putRun(t, s, tid, r1, "", nil)
	s2 := putRun(t, s, tid, r2, "", &s1)
	putRun(t, s, tid, r3, "", &s2)
	wantRuns(t, s, q(tid, ""), []string{r1, r2, r3}, nil)
	deleteForRuns(t, d, r1, r2)
	wantRuns(t, s, q(tid, ""), []string{r3}, []string{r1, r2})
}

// P-DFR-03: only the survival of the other run is asserted.
func deleteForRunsPreservesOtherRuns(t *testing.T, s checkpoint.Saver, d checkpoint.RunDeleter) {
	tid, keep, del := newUUID(), newUUID(), newUUID()
	putRun(t, s, tid, keep, "", nil)
	putRun(t, s, tid, del, "", nil)
	wantRuns(t, s, q(tid, ""), []string{keep, del}, nil)
	deleteForRuns(t, d, del)
	wantRuns(t, s, q(tid, ""), []string{keep}, nil)
}

// P-DFR-04
func deleteForRunsRemovesWrites(t *testing.T, s checkpoint.Saver, d checkpoint.RunDeleter) {
	tid, r1 := newUUID(), newUUID()
	c := putRun(t, s, tid, r1, "", nil)
	putWrites(t, s, c, newUUID(), w("ch", "val"))
	if n := len(mustTup(t, s, c).PendingWrites); n != 1 {
		t.Fatalf("pre-check: %d pending writes, want 1", n)
	}
	deleteForRuns(t, d, r1)
	wantGone(t, s, c)
}

// P-DFR-05
func deleteForRunsEmptyListNoop(t *testing.T, _ checkpoint.Saver, d checkpoint.RunDeleter) {
	deleteForRuns(t, d)
}

// P-DFR-06
func deleteForRunsNonexistentNoop(t *testing.T, _ checkpoint.Saver, d checkpoint.RunDeleter) {
	deleteForRuns(t, d, newUUID())
}

// P-DFR-07
func deleteForRunsAcrossNamespaces(t *testing.T, s checkpoint.Saver, d checkpoint.RunDeleter) {
	tid, r1, nss := newUUID(), newUUID(), []string{"", "child:1"}
	for _, ns := range nss {
		putRun(t, s, tid, r1, ns, nil)
	}
	for _, ns := range nss {
		wantRuns(t, s, q(tid, ns), []string{r1}, nil)
	}
	deleteForRuns(t, d, r1)
	for _, ns := range nss {
		wantRuns(t, s, q(tid, ns), nil, []string{r1})
	}
}
