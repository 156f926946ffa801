package checkpointtest

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// edgeCases is the group "edge": behaviour the Go API promises beyond the
// Python suite. The cases on values and errors are in edgevalues.go.
var edgeCases = []testCase[checkpoint.Saver]{
	base("list_nil_namespace_lists_all_namespaces", listNilNamespace),
	base("list_checkpoint_id_selects_one", listCheckpointIDSelectsOne),
	base("list_tuples_equal_get_tuple", listTuplesEqualGetTuple),
	base("list_all_threads_by_marker", listAllThreadsByMarker),
	base("namespaces_with_special_characters", namespacesWithSpecialCharacters),
	base("thread_ids_with_separators_isolated", threadIDsIsolated),
	base("put_same_id_overwrites_keeps_writes", putSameIDOverwritesKeepsWrites),
	base("special_writes_overwrite_regular_keep_first", specialWritesOverwrite),
	base("pending_writes_ordered_by_task_and_index", pendingWritesOrdered),
	base("metadata_roundtrip", metadataRoundtrip),
	base("filter_float_matches_int", filterFloatMatchesInt),
	base("filter_nested_map_deep_equality", filterNestedMap),
	base("filter_nil_matches_missing_key", filterNilMatchesMissing),
	base("list_before_limit_filter_combined", listBeforeLimitFilter),
	base("list_limit_larger_than_results", listLimitLargerThanResults),
	base("channel_value_types_roundtrip", channelValueTypesRoundtrip),
	base("new_version_without_value_is_absent", newVersionWithoutValue),
	base("fork_copy_beside_reads_its_values", forkCopyReadsValues),
	base("versions_seen_empty_keys_roundtrip", versionsSeenEmptyKeys),
	base("updated_channels_roundtrip", updatedChannelsRoundtrip),
	base("ts_roundtrip", tsRoundtrip),
	base("v_roundtrip", vRoundtrip),
	base("put_without_thread_id", putWithoutThreadID),
	base("put_writes_without_ids", putWritesWithoutIDs),
	base("get_tuple_empty_thread_id", getTupleEmptyThreadID),
	base("delete_unknown_thread", deleteUnknownThread),
	base("next_version_increases", nextVersionIncreases),
	base("pending_sends_migration", pendingSendsMigration),
}

// Proves that ListQuery.CheckpointNS nil means every namespace of the thread
// (contract §7.1: absent is not ""), ordered newest ID first across
// namespaces rather than grouped by namespace.
func listNilNamespace(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	var ids []string
	for _, ns := range []string{"", "child:1", "", "other", "child:1"} {
		ids = append(ids, put(t, s, cfg(tid, ns), emptyCP(), defaultMD(), nil).CheckpointID)
	}
	slices.Reverse(ids)
	wantIDs(t, "list with nil namespace", idsOf(list(t, s, checkpoint.ListQuery{ThreadID: tid})), ids)
}

// Proves that ListQuery.CheckpointID selects exactly that checkpoint, not
// the ones before or after it, with or without a namespace.
func listCheckpointIDSelectsOne(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	ids := configIDs(chain(t, s, tid, "", 3, stepMD))
	query := q(tid, "")
	query.CheckpointID = ids[1]
	wantIDs(t, "list by checkpoint id", idsOf(list(t, s, query)), ids[1:2])
	wantIDs(t, "list by checkpoint id, nil namespace",
		idsOf(list(t, s, checkpoint.ListQuery{ThreadID: tid, CheckpointID: ids[1]})), ids[1:2])
}

// Proves that List yields exactly what GetTuple returns for each checkpoint
// (config, values, versions, metadata, parent, pending writes), as the JS
// list matrix requires (contract §1.7 list, §7.9).
func listTuplesEqualGetTuple(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	c0 := put(t, s, cfg(tid, "child:1"), cp(map[string]any{"a": "x", "n": 1}, versions("a", "1", "n", "1"), nil),
		md("input", -1), versions("a", "1", "n", "1"))
	putWrites(t, s, c0, "task", w("a", "y"), w(checkpoint.InterruptChannel, map[string]any{"k": []any{1.5}}))
	ck := cp(map[string]any{"a": "y"}, versions("a", "2", "n", "1"), map[string]map[string]string{"": {"a": "1"}})
	ck.UpdatedChannels = []string{"a"}
	c1 := put(t, s, childOf(c0), ck, md("loop", 0, "parents", map[string]any{"": c0.CheckpointID}), versions("a", "2"))
	putWrites(t, s, c1, "task", w("n", 2))
	got := list(t, s, checkpoint.ListQuery{ThreadID: tid})
	wantIDs(t, "list", idsOf(got), []string{c1.CheckpointID, c0.CheckpointID})
	for _, tp := range got {
		want := mustTup(t, s, tp.Config)
		if !reflect.DeepEqual(tp, want) {
			t.Fatalf("listed tuple\n%+v\ndiffers from GetTuple\n%+v", *tp, *want)
		}
	}
}

// Proves that ThreadID "" lists across every thread: a unique metadata
// marker finds exactly the checkpoints of two fresh threads, newest first,
// whatever else the shared saver holds.
func listAllThreadsByMarker(t *testing.T, s checkpoint.Saver) {
	marker, t1, t2 := newUUID(), newUUID(), newUUID()
	var want []string
	for i, tid := range []string{t1, t2, t1, t2} {
		want = append(want, put(t, s, cfg(tid, ""), emptyCP(), md("loop", i, "marker", marker), nil).CheckpointID)
	}
	slices.Reverse(want)
	got := list(t, s, checkpoint.ListQuery{Filter: checkpoint.Metadata{"marker": marker}})
	wantIDs(t, "global list of the marker", idsOf(got), want)
	for _, tp := range got {
		if tp.Config.ThreadID != t1 && tp.Config.ThreadID != t2 {
			t.Fatalf("global list returned thread %q", tp.Config.ThreadID)
		}
	}
}

// Proves that namespaces holding key separators (':', '|'), unicode and
// spaces are stored and matched verbatim: each reads back under its own
// name, lists alone, and none leaks into another.
func namespacesWithSpecialCharacters(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	nss := []string{"a:b", "a|b", "a:b|c:d", "ünï cødé ✓", "with space", " ", "a"}
	ids := map[string]string{}
	for _, ns := range nss {
		c := put(t, s, cfg(tid, ns), emptyCP(), defaultMD(), nil)
		putWrites(t, s, c, newUUID(), w("ch", ns))
		ids[ns] = c.CheckpointID
	}
	for _, ns := range nss {
		tp := mustTup(t, s, cfg(tid, ns))
		if tp.Checkpoint.ID != ids[ns] || tp.Config.CheckpointNS != ns {
			t.Fatalf("namespace %q: got checkpoint %q in namespace %q, want %q", ns, tp.Checkpoint.ID, tp.Config.CheckpointNS, ids[ns])
		}
		wantSingleWrite(t, tp, "ch", ns)
		wantIDs(t, "list of namespace "+ns, idsOf(list(t, s, q(tid, ns))), []string{ids[ns]})
	}
	wantLen(t, "list of every namespace", list(t, s, checkpoint.ListQuery{ThreadID: tid}), len(nss))
	wantLen(t, `list of ns "a:"`, list(t, s, q(tid, "a:")), 0)
}

// Proves that thread IDs that are prefixes of one another across a ':' ("a",
// "a:b", "a:") are isolated: checkpoints, writes, channel values and
// deletion of one never show in another.
func threadIDsIsolated(t *testing.T, s checkpoint.Saver) {
	base := newUUID()
	tids := []string{base, base + ":b", base + ":", base + ":b:"}
	ids := map[string]string{}
	for _, tid := range tids {
		ck := cp(map[string]any{"x": tid}, versions("x", "1"), nil)
		c := put(t, s, cfg(tid, ""), ck, defaultMD(), versions("x", "1"))
		putWrites(t, s, c, "task", w("ch", tid))
		ids[tid] = c.CheckpointID
	}
	check := func(tid string) {
		t.Helper()
		tp := mustTup(t, s, cfg(tid, ""))
		if tp.Checkpoint.ID != ids[tid] {
			t.Fatalf("thread %q: latest %q, want %q", tid, tp.Checkpoint.ID, ids[tid])
		}
		wantChannel(t, tp, "x", tid)
		wantSingleWrite(t, tp, "ch", tid)
		wantIDs(t, "list of thread "+tid, idsOf(list(t, s, checkpoint.ListQuery{ThreadID: tid})), []string{ids[tid]})
	}
	for _, tid := range tids {
		check(tid)
	}
	deleteThread(t, s, tids[1])
	wantGone(t, s, cfg(tids[1], ""))
	for _, tid := range []string{tids[0], tids[2], tids[3]} {
		check(tid)
	}
}

// Proves that putting an existing ID replaces the checkpoint (values,
// versions) and its metadata entirely, while its pending writes survive.
func putSameIDOverwritesKeepsWrites(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	first := cp(map[string]any{"a": "one"}, versions("a", "1"), nil)
	c := put(t, s, cfg(tid, ""), first, md("loop", 1, "only_first", true), versions("a", "1"))
	putWrites(t, s, c, "task", w("ch", "kept"))
	second := cp(map[string]any{"a": "two"}, versions("a", "2"), nil)
	second.ID = first.ID
	put(t, s, cfg(tid, ""), second, md("update", 2), versions("a", "2"))
	tp := mustTup(t, s, c)
	wantChannel(t, tp, "a", "two")
	wantValue(t, "metadata", tp.Metadata, md("update", 2))
	wantSingleWrite(t, tp, "ch", "kept")
	wantLen(t, "list", list(t, s, q(tid, "")), 1)
}

// Proves the per-write rule of contract D6: a special channel (negative
// index) overwrites its previous value, a regular write with an existing
// (task, index) is ignored, both for the same task and checkpoint.
func specialWritesOverwrite(t *testing.T, s checkpoint.Saver) {
	c := emptyTarget(t, s)
	putWrites(t, s, c, "task", w("ch", "first"), w(checkpoint.ErrorChannel, "error 1"))
	putWrites(t, s, c, "task", w("ch", "second"), w(checkpoint.ErrorChannel, "error 2"))
	tp := mustTup(t, s, c)
	if len(tp.PendingWrites) != 2 {
		t.Fatalf("pending writes = %+v, want 2", tp.PendingWrites)
	}
	wantOneWrite(t, tp, "task", "ch", "first")
	wantOneWrite(t, tp, "task", checkpoint.ErrorChannel, "error 2")
}

// Proves the read order of pending writes (contract D5): by task ID, then by
// index, so the special channels (negative indices) come first within a
// task, whatever the order of the PutWrites calls.
func pendingWritesOrdered(t *testing.T, s checkpoint.Saver) {
	c := emptyTarget(t, s)
	putWrites(t, s, c, "task-b", w("b0", 0), w(checkpoint.ErrorChannel, "e"), w("b2", 2))
	putWrites(t, s, c, "task-a", w("a0", 0), w(checkpoint.InterruptChannel, "i"), w(checkpoint.ResumeChannel, "r"))
	var got []string
	for _, pw := range mustTup(t, s, c).PendingWrites {
		got = append(got, pw.TaskID+"/"+pw.Channel)
	}
	want := []string{
		"task-a/" + checkpoint.ResumeChannel, "task-a/" + checkpoint.InterruptChannel, "task-a/a0",
		"task-b/" + checkpoint.ErrorChannel, "task-b/b0", "task-b/b2",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pending write order = %q, want %q", got, want)
	}
}

// Proves that GetTuple with ThreadID "" reports ErrNotFound (contract D3)
// rather than panicking or returning another checkpoint.
func getTupleEmptyThreadID(t *testing.T, s checkpoint.Saver) {
	put(t, s, cfg(newUUID(), ""), emptyCP(), defaultMD(), nil)
	tp, err := s.GetTuple(testctx.Context(t), checkpoint.Config{})
	if tp != nil || !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("GetTuple(empty thread) = (%v, %v), want (nil, ErrNotFound)", tp, err)
	}
}

// Proves that deleting a thread that never existed is a no-op, not an
// error.
func deleteUnknownThread(t *testing.T, s checkpoint.Saver) {
	deleteThread(t, s, newUUID()+":never")
}

// Proves that Saver.NextVersion produces versions that sort in byte order:
// the first one before its successor, and 20 chained versions strictly
// increasing.
func nextVersionIncreases(t *testing.T, s checkpoint.Saver) {
	first := s.NextVersion("")
	if second := s.NextVersion(first); !(first < second) {
		t.Fatalf("NextVersion(\"\") = %q does not sort before its successor %q", first, second)
	}
	v := ""
	for i := range 20 {
		next := s.NextVersion(v)
		if !(v < next) {
			t.Fatalf("step %d: NextVersion(%q) = %q, not greater", i, v, next)
		}
		v = next
	}
}
