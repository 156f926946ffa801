package checkpointtest

import (
	"cmp"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// copyThreadCases is the COPY_THREAD group (contract §4.7, P-CT-01..08), run
// when the saver implements checkpoint.ThreadCopier. S and D are fresh
// source and destination threads.
var copyThreadCases = []testCase[checkpoint.ThreadCopier]{
	{"copy_thread_basic", copyThreadBasic},
	{"copy_thread_all_checkpoints", copyThreadAllCheckpoints},
	{"copy_thread_preserves_metadata", copyThreadPreservesMetadata},
	{"copy_thread_preserves_namespaces", copyThreadPreservesNamespaces},
	{"copy_thread_preserves_writes", copyThreadPreservesWrites},
	{"copy_thread_preserves_ordering", copyThreadPreservesOrdering},
	{"copy_thread_source_unchanged", copyThreadSourceUnchanged},
	{"copy_thread_nonexistent_source", copyThreadNonexistentSource},
}

// setupSrc is setup_src(T, n, namespaces): per namespace, n chained puts
// with channel values {"step": i} at version 1 (every put rewrites that
// blob), MD(step=i). It returns the stored configs in order.
func setupSrc(t *testing.T, s checkpoint.Saver, tid string, n int, namespaces ...string) []checkpoint.Config {
	t.Helper()
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var out []checkpoint.Config
	for _, ns := range namespaces {
		c := cfg(tid, ns)
		for i := range n {
			ck := cp(map[string]any{"step": i}, versions("step", "1"), nil)
			stored := put(t, s, c, ck, md("loop", i), versions("step", "1"))
			out = append(out, stored)
			c = childOf(stored)
		}
	}
	return out
}

// copyThread calls CopyThread and fails the test on error.
func copyThread(t *testing.T, c checkpoint.ThreadCopier, src, dst string) {
	t.Helper()
	if err := c.CopyThread(testctx.Context(t), src, dst); err != nil {
		t.Fatalf("CopyThread(%q, %q): %v", src, dst, err)
	}
}

// P-CT-01
func copyThreadBasic(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	src, dst := newUUID(), newUUID()
	setupSrc(t, s, src, 3)
	copyThread(t, c, src, dst)
	wantLen(t, "list of the copy", list(t, s, q(dst, "")), 3)
}

// P-CT-02
func copyThreadAllCheckpoints(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	src, dst := newUUID(), newUUID()
	setupSrc(t, s, src, 3)
	copyThread(t, c, src, dst)
	a, b := list(t, s, q(src, "")), list(t, s, q(dst, ""))
	wantLen(t, "list of the copy", b, len(a))
	byID := func(x, y *checkpoint.Tuple) int { return cmp.Compare(x.Checkpoint.ID, y.Checkpoint.ID) }
	slices.SortFunc(a, byID)
	slices.SortFunc(b, byID)
	for i := range a {
		wantValue(t, "channel values of copy "+b[i].Checkpoint.ID, b[i].Checkpoint.ChannelValues, a[i].Checkpoint.ChannelValues)
	}
}

// P-CT-03
func copyThreadPreservesMetadata(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	src, dst := newUUID(), newUUID()
	setupSrc(t, s, src, 2)
	copyThread(t, c, src, dst)
	a, b := list(t, s, q(src, "")), list(t, s, q(dst, ""))
	wantLen(t, "list of the copy", b, len(a))
	byStep := func(x, y *checkpoint.Tuple) int {
		sx, _ := number(x.Metadata["step"])
		sy, _ := number(y.Metadata["step"])
		return cmp.Compare(sx.i, sy.i)
	}
	slices.SortFunc(a, byStep)
	slices.SortFunc(b, byStep)
	for i := range a {
		for k, v := range a[i].Metadata {
			wantValue(t, "copied metadata "+k, b[i].Metadata[k], v)
		}
	}
}

// P-CT-04
func copyThreadPreservesNamespaces(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	src, dst, nss := newUUID(), newUUID(), []string{"", "child:1"}
	setupSrc(t, s, src, 1, nss...)
	copyThread(t, c, src, dst)
	for _, ns := range nss {
		wantLen(t, "list of the copy in ns "+ns, list(t, s, q(dst, ns)), 1)
	}
}

// P-CT-05
func copyThreadPreservesWrites(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	src, dst := newUUID(), newUUID()
	stored := setupSrc(t, s, src, 1)
	putWrites(t, s, stored[len(stored)-1], newUUID(), w("ch", "write_val"))
	copyThread(t, c, src, dst)
	wantSingleWrite(t, mustTup(t, s, cfg(dst, "")), "ch", "write_val")
}

// P-CT-06: identical IDs in the same newest-first order.
func copyThreadPreservesOrdering(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	src, dst := newUUID(), newUUID()
	setupSrc(t, s, src, 4)
	copyThread(t, c, src, dst)
	wantIDs(t, "list of the copy", idsOf(list(t, s, q(dst, ""))), idsOf(list(t, s, q(src, ""))))
}

// P-CT-07
func copyThreadSourceUnchanged(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	src, dst := newUUID(), newUUID()
	setupSrc(t, s, src, 2)
	before := idsOf(list(t, s, q(src, "")))
	copyThread(t, c, src, dst)
	wantIDs(t, "list of the source after the copy", idsOf(list(t, s, q(src, ""))), before)
}

// P-CT-08: an error is tolerated (Python swallows it); the target must stay
// empty.
func copyThreadNonexistentSource(t *testing.T, s checkpoint.Saver, c checkpoint.ThreadCopier) {
	dst := newUUID()
	_ = c.CopyThread(testctx.Context(t), newUUID(), dst)
	wantLen(t, "list of the target", list(t, s, q(dst, "")), 0)
}
