package checkpointtest

import (
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// pruneCases is the PRUNE group (contract §4.8, P-PR-01..08), run when the
// saver implements checkpoint.Pruner.
var pruneCases = []testCase[checkpoint.Pruner]{
	{"prune_keep_latest_single_thread", pruneKeepLatestSingleThread},
	{"prune_keep_latest_multiple_threads", pruneKeepLatestMultipleThreads},
	{"prune_keep_latest_across_namespaces", pruneKeepLatestAcrossNamespaces},
	{"prune_keep_latest_preserves_writes", pruneKeepLatestPreservesWrites},
	{"prune_delete_all", pruneDeleteAll},
	{"prune_preserves_other_threads", prunePreservesOtherThreads},
	{"prune_empty_list_noop", pruneEmptyListNoop},
	{"prune_nonexistent_noop", pruneNonexistentNoop},
}

// prune calls Prune and fails the test on error.
func prune(t *testing.T, p checkpoint.Pruner, strategy checkpoint.PruneStrategy, tids ...string) {
	t.Helper()
	if err := p.Prune(testctx.Context(t), tids, strategy); err != nil {
		t.Fatalf("Prune(%q, %q): %v", tids, strategy, err)
	}
}

// setupPrune is the group's setup(T, n): chain(T, n) with MD(step=i).
func setupPrune(t *testing.T, s checkpoint.Saver, tid string, n int) []checkpoint.Config {
	t.Helper()
	return chain(t, s, tid, "", n, stepMD)
}

// last returns the ID of the last stored config.
func last(cs []checkpoint.Config) string { return cs[len(cs)-1].CheckpointID }

// P-PR-01
func pruneKeepLatestSingleThread(t *testing.T, s checkpoint.Saver, p checkpoint.Pruner) {
	tid := newUUID()
	c := setupPrune(t, s, tid, 4)
	prune(t, p, checkpoint.PruneKeepLatest, tid)
	wantIDs(t, "list after prune", idsOf(list(t, s, q(tid, ""))), []string{last(c)})
}

// P-PR-02
func pruneKeepLatestMultipleThreads(t *testing.T, s checkpoint.Saver, p checkpoint.Pruner) {
	t1, t2 := newUUID(), newUUID()
	c1, c2 := setupPrune(t, s, t1, 3), setupPrune(t, s, t2, 2)
	prune(t, p, checkpoint.PruneKeepLatest, t1, t2)
	wantIDs(t, "list of thread 1 after prune", idsOf(list(t, s, q(t1, ""))), []string{last(c1)})
	wantIDs(t, "list of thread 2 after prune", idsOf(list(t, s, q(t2, ""))), []string{last(c2)})
}

// P-PR-03: keep-latest is per namespace, not per thread.
func pruneKeepLatestAcrossNamespaces(t *testing.T, s checkpoint.Saver, p checkpoint.Pruner) {
	tid := newUUID()
	root := chain(t, s, tid, "", 3, stepMD)
	child := chain(t, s, tid, "child:1", 2, stepMD)
	prune(t, p, checkpoint.PruneKeepLatest, tid)
	wantIDs(t, `list ns "" after prune`, idsOf(list(t, s, q(tid, ""))), []string{last(root)})
	wantIDs(t, `list ns "child:1" after prune`, idsOf(list(t, s, q(tid, "child:1"))), []string{last(child)})
}

// P-PR-04
func pruneKeepLatestPreservesWrites(t *testing.T, s checkpoint.Saver, p checkpoint.Pruner) {
	tid := newUUID()
	c := setupPrune(t, s, tid, 3)
	putWrites(t, s, c[len(c)-1], newUUID(), w("ch", "val"))
	prune(t, p, checkpoint.PruneKeepLatest, tid)
	wantSingleWrite(t, mustTup(t, s, cfg(tid, "")), "ch", "val")
}

// P-PR-05: the strategy is "delete", not "delete_all".
func pruneDeleteAll(t *testing.T, s checkpoint.Saver, p checkpoint.Pruner) {
	tid := newUUID()
	setupPrune(t, s, tid, 3)
	prune(t, p, checkpoint.PruneDelete, tid)
	wantLen(t, "list after prune", list(t, s, q(tid, "")), 0)
}

// P-PR-06
func prunePreservesOtherThreads(t *testing.T, s checkpoint.Saver, p checkpoint.Pruner) {
	t1, t2 := newUUID(), newUUID()
	setupPrune(t, s, t1, 3)
	setupPrune(t, s, t2, 2)
	before := idsOf(list(t, s, q(t2, "")))
	prune(t, p, checkpoint.PruneKeepLatest, t1)
	wantIDs(t, "list of the other thread", idsOf(list(t, s, q(t2, ""))), before)
}

// P-PR-07: an empty list must not raise.
func pruneEmptyListNoop(t *testing.T, _ checkpoint.Saver, p checkpoint.Pruner) {
	prune(t, p, checkpoint.PruneKeepLatest)
}

// P-PR-08
func pruneNonexistentNoop(t *testing.T, _ checkpoint.Saver, p checkpoint.Pruner) {
	prune(t, p, checkpoint.PruneKeepLatest, newUUID())
}
