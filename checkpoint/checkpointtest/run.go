package checkpointtest

import (
	"reflect"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

// Run runs the whole kit against the savers newSaver returns: the base
// groups (RunBase), the extended groups (RunExtended, which opts configure)
// and this package's own edge cases (RunEdge), in that order, as subtests of
// t.
func Run(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver, opts ...Option) {
	t.Helper()
	RunBase(t, newSaver)
	RunExtended(t, newSaver, opts...)
	RunEdge(t, newSaver)
}

// RunBase runs the five groups every saver must pass, in the order of the
// Python harness: put, put_writes, get_tuple, list and delete_thread.
func RunBase(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	runGroup(t, "put", newSaver, putCases, nil)
	runGroup(t, "put_writes", newSaver, putWritesCases, nil)
	runGroup(t, "get_tuple", newSaver, getTupleCases, nil)
	runGroup(t, "list", newSaver, listCases, nil)
	runGroup(t, "delete_thread", newSaver, deleteThreadCases, nil)
}

// RunExtended runs the groups of the optional capabilities:
// delete_for_runs (checkpoint.RunDeleter), copy_thread
// (checkpoint.ThreadCopier), prune (checkpoint.Pruner) and
// delta_channel_history (checkpoint.DeltaHistorian). A group whose
// interface the saver does not implement FAILS, unless Without names that
// capability: then it is skipped.
func RunExtended(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver, opts ...Option) {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for _, c := range o.without {
		if !slices.Contains(capabilities, c) {
			t.Fatalf("checkpointtest: Without(%q): not a capability (want one of %q)", c, capabilities)
		}
	}
	runGroup(t, "delete_for_runs", newSaver, deleteForRunsCases, o.without)
	runGroup(t, "copy_thread", newSaver, copyThreadCases, o.without)
	runGroup(t, "prune", newSaver, pruneCases, o.without)
	runGroup(t, "delta_channel_history", newSaver, deltaCases, o.without)
}

// RunEdge runs the group "edge": cases beyond the Python suite that pin down
// the Go API (nil namespace, global listing, odd IDs, error sentinels, value
// types, the legacy pending-sends migration).
func RunEdge(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	runGroup(t, "edge", newSaver, edgeCases, nil)
}

// testCase is one conformance case. C is the interface the group needs:
// checkpoint.Saver for the base groups, a capability interface otherwise.
type testCase[C any] struct {
	name string
	fn   func(t *testing.T, s checkpoint.Saver, c C)
}

// runGroup creates one saver for the group (as the Python harness does per
// capability), checks that the saver implements C (failing when it does
// not, unless without names C; failing as well when without names a C the
// saver implements) and runs the cases sequentially against that saver.
func runGroup[C any](t *testing.T, group string, newSaver func(t *testing.T) checkpoint.Saver, cases []testCase[C], without []Capability) {
	t.Helper()
	t.Run(group, func(t *testing.T) {
		s := newSaver(t)
		if s == nil {
			t.Fatal("newSaver returned nil")
		}
		iface := reflect.TypeOf((*C)(nil)).Elem()
		optedOut := slices.Contains(without, Capability(iface.Name()))
		c, ok := s.(C)
		switch {
		case !ok && optedOut:
			t.Skipf("saver does not implement %s (opted out with Without(%q))", iface, iface.Name())
		case !ok:
			t.Fatalf("saver %T does not implement %s: implement it, or opt out with checkpointtest.Without(%q)", s, iface, iface.Name())
		case optedOut:
			t.Fatalf("saver %T implements %s, yet Without(%q) opts out of its tests: remove it from Without", s, iface, iface.Name())
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
