package checkpointtest

import (
	"reflect"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

// Run runs the whole kit against the savers newSaver returns: the base
// groups (RunBase), the extended groups (RunExtended) and this package's
// own edge cases (RunEdge), in that order, as subtests of t.
func Run(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	RunBase(t, newSaver)
	RunExtended(t, newSaver)
	RunEdge(t, newSaver)
}

// RunBase runs the five groups every saver must pass, in the order of the
// Python harness: put, put_writes, get_tuple, list and delete_thread.
func RunBase(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	runGroup(t, "put", newSaver, putCases)
	runGroup(t, "put_writes", newSaver, putWritesCases)
	runGroup(t, "get_tuple", newSaver, getTupleCases)
	runGroup(t, "list", newSaver, listCases)
	runGroup(t, "delete_thread", newSaver, deleteThreadCases)
}

// RunExtended runs the groups of the optional capabilities:
// delete_for_runs (checkpoint.RunDeleter), copy_thread
// (checkpoint.ThreadCopier), prune (checkpoint.Pruner) and
// delta_channel_history (checkpoint.DeltaHistorian). A group whose
// interface the saver does not implement is skipped.
func RunExtended(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	runGroup(t, "delete_for_runs", newSaver, deleteForRunsCases)
	runGroup(t, "copy_thread", newSaver, copyThreadCases)
	runGroup(t, "prune", newSaver, pruneCases)
	runGroup(t, "delta_channel_history", newSaver, deltaCases)
}

// RunEdge runs the group "edge": cases beyond the Python suite that pin down
// the Go API (nil namespace, global listing, odd IDs, error sentinels, value
// types, the legacy pending-sends migration).
func RunEdge(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	runGroup(t, "edge", newSaver, edgeCases)
}

// testCase is one conformance case. C is the interface the group needs:
// checkpoint.Saver for the base groups, a capability interface otherwise.
type testCase[C any] struct {
	name string
	fn   func(t *testing.T, s checkpoint.Saver, c C)
}

// runGroup creates one saver for the group (as the Python harness does per
// capability), skips the group when the saver does not implement C, and
// runs the cases sequentially against that saver.
func runGroup[C any](t *testing.T, group string, newSaver func(t *testing.T) checkpoint.Saver, cases []testCase[C]) {
	t.Helper()
	t.Run(group, func(t *testing.T) {
		s := newSaver(t)
		if s == nil {
			t.Fatal("newSaver returned nil")
		}
		c, ok := s.(C)
		if !ok {
			t.Skipf("saver does not implement %s", reflect.TypeFor[C]())
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) { tc.fn(t, s, c) })
		}
	})
}

// base adapts a case that needs only the Saver.
func base(name string, fn func(t *testing.T, s checkpoint.Saver)) testCase[checkpoint.Saver] {
	return testCase[checkpoint.Saver]{name: name, fn: func(t *testing.T, s checkpoint.Saver, _ checkpoint.Saver) { fn(t, s) }}
}
