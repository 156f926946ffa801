package checkpointtest

import (
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// deleteThreadCases is the DELETE_THREAD group (contract §4.5,
// P-DT-01..05).
var deleteThreadCases = []testCase[checkpoint.Saver]{
	base("delete_thread_removes_checkpoints", deleteThreadRemovesCheckpoints),
	base("delete_thread_removes_writes", deleteThreadRemovesWrites),
	base("delete_thread_removes_all_namespaces", deleteThreadRemovesAllNamespaces),
	base("delete_thread_preserves_other_threads", deleteThreadPreservesOtherThreads),
	base("delete_thread_nonexistent_noop", deleteThreadNonexistentNoop),
}

// deleteThread calls DeleteThread and fails the test on error.
func deleteThread(t *testing.T, s checkpoint.Saver, tid string) {
	t.Helper()
	if err := s.DeleteThread(testctx.Context(t), tid); err != nil {
		t.Fatalf("DeleteThread(%q): %v", tid, err)
	}
}

// wantGone fails unless GetTuple(c) reports not found.
func wantGone(t *testing.T, s checkpoint.Saver, c checkpoint.Config) {
	t.Helper()
	if tp := tup(t, s, c); tp != nil {
		t.Fatalf("GetTuple(%+v) still returns checkpoint %q", c, tp.Checkpoint.ID)
	}
}

// P-DT-01
func deleteThreadRemovesCheckpoints(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	chain(t, s, tid, "", 3, stepMD)
	mustTup(t, s, cfg(tid, ""))
	deleteThread(t, s, tid)
	wantGone(t, s, cfg(tid, ""))
	wantLen(t, "list after delete", list(t, s, q(tid, "")), 0)
}

// P-DT-02
func deleteThreadRemovesWrites(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	c := put(t, s, cfg(tid, ""), emptyCP(), defaultMD(), nil)
	putWrites(t, s, c, newUUID(), w("ch", "val"))
	if n := len(mustTup(t, s, cfg(tid, "")).PendingWrites); n != 1 {
		t.Fatalf("pre-check: %d pending writes, want 1", n)
	}
	deleteThread(t, s, tid)
	wantGone(t, s, cfg(tid, ""))
}

// P-DT-03
func deleteThreadRemovesAllNamespaces(t *testing.T, s checkpoint.Saver) {
	tid, nss := newUUID(), []string{"", "child:1"}
	for _, ns := range nss {
		put(t, s, cfg(tid, ns), emptyCP(), defaultMD(), nil)
		mustTup(t, s, cfg(tid, ns))
	}
	deleteThread(t, s, tid)
	for _, ns := range nss {
		wantGone(t, s, cfg(tid, ns))
	}
}

// P-DT-04
func deleteThreadPreservesOtherThreads(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newUUID(), newUUID()
	put(t, s, cfg(t1, ""), emptyCP(), defaultMD(), nil)
	put(t, s, cfg(t2, ""), emptyCP(), defaultMD(), nil)
	deleteThread(t, s, t1)
	wantGone(t, s, cfg(t1, ""))
	mustTup(t, s, cfg(t2, ""))
}

// P-DT-05
func deleteThreadNonexistentNoop(t *testing.T, s checkpoint.Saver) {
	deleteThread(t, s, newUUID())
}
