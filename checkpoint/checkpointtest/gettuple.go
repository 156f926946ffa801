package checkpointtest

import (
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

// getTupleCases is the GET_TUPLE group (contract §4.3, P-GT-01..10). "None"
// is (nil, err) with errors.Is(err, checkpoint.ErrNotFound).
var getTupleCases = []testCase[checkpoint.Saver]{
	base("get_tuple_nonexistent_returns_none", getTupleNonexistentReturnsNone),
	base("get_tuple_latest_when_no_checkpoint_id", getTupleLatestWhenNoCheckpointID),
	base("get_tuple_specific_checkpoint_id", getTupleSpecificCheckpointID),
	base("get_tuple_config_structure", getTupleConfigStructure),
	base("get_tuple_checkpoint_fields", getTupleCheckpointFields),
	base("get_tuple_metadata", getTupleMetadata),
	base("get_tuple_parent_config", getTupleParentConfig),
	base("get_tuple_pending_writes", getTuplePendingWrites),
	base("get_tuple_respects_namespace", getTupleRespectsNamespace),
	base("get_tuple_nonexistent_checkpoint_id", getTupleNonexistentCheckpointID),
}

// P-GT-01
func getTupleNonexistentReturnsNone(t *testing.T, s checkpoint.Saver) {
	if tp := tup(t, s, cfg(newUUID(), "")); tp != nil {
		t.Fatalf("GetTuple on an unused thread returned checkpoint %q", tp.Checkpoint.ID)
	}
}

// P-GT-02
func getTupleLatestWhenNoCheckpointID(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	ids := configIDs(chain(t, s, tid, "", 3, stepMD))
	tp := mustTup(t, s, cfg(tid, ""))
	if tp.Checkpoint.ID != ids[2] {
		t.Fatalf("latest = %q, want %q", tp.Checkpoint.ID, ids[2])
	}
	wantValue(t, "metadata step", tp.Metadata["step"], 2)
}

// P-GT-03
func getTupleSpecificCheckpointID(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	cp1 := emptyCP()
	s1 := put(t, s, cfg(tid, ""), cp1, md("loop", 0), nil)
	put(t, s, childOf(s1), emptyCP(), md("loop", 1), nil)
	if got := mustTup(t, s, s1).Checkpoint.ID; got != cp1.ID {
		t.Fatalf("GetTuple(s1) = %q, want %q (not the latest)", got, cp1.ID)
	}
}

// P-GT-04
func getTupleConfigStructure(t *testing.T, s checkpoint.Saver) {
	tid, ck := newUUID(), emptyCP()
	c := mustTup(t, s, put(t, s, cfg(tid, ""), ck, defaultMD(), nil)).Config
	if c.ThreadID != tid || c.CheckpointNS != "" || c.CheckpointID != ck.ID {
		t.Fatalf("tuple config = %+v, want {%q \"\" %q}", c, tid, ck.ID)
	}
}

// P-GT-05. The Python case asserts the keys channel_versions and
// versions_seen are present; a Go struct always has the fields, so the kit
// asserts the version of "k" is there and VersionsSeen is a non-nil map
// (it was put as an empty map).
func getTupleCheckpointFields(t *testing.T, s checkpoint.Saver) {
	ck := cp(map[string]any{"k": "v"}, versions("k", "1"), nil)
	got := mustTup(t, s, put(t, s, cfg(newUUID(), ""), ck, defaultMD(), versions("k", "1"))).Checkpoint
	if got.ID != ck.ID {
		t.Fatalf("id = %q, want %q", got.ID, ck.ID)
	}
	if got.V != 1 {
		t.Fatalf("v = %d, want 1", got.V)
	}
	if got.TS == "" {
		t.Fatal("ts is empty")
	}
	wantValue(t, "channel values", got.ChannelValues, map[string]any{"k": "v"})
	if _, ok := got.ChannelVersions["k"]; !ok {
		t.Fatalf("channel versions %v lack k", got.ChannelVersions)
	}
	if got.VersionsSeen == nil {
		t.Fatal("versions seen is nil, want the (empty) map that was put")
	}
}

// P-GT-06
func getTupleMetadata(t *testing.T, s checkpoint.Saver) {
	tp := mustTup(t, s, put(t, s, cfg(newUUID(), ""), emptyCP(), md("input", -1), nil))
	wantValue(t, "metadata source", tp.Metadata["source"], "input")
	wantValue(t, "metadata step", tp.Metadata["step"], -1)
}

// P-GT-07
func getTupleParentConfig(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	s1 := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0), nil)
	if pc := mustTup(t, s, s1).ParentConfig; pc != nil {
		t.Fatalf("root checkpoint has parent config %+v", *pc)
	}
	s2 := put(t, s, childOf(s1), emptyCP(), md("loop", 1), nil)
	pc := mustTup(t, s, s2).ParentConfig
	if pc == nil || pc.CheckpointID != s1.CheckpointID {
		t.Fatalf("parent config = %+v, want checkpoint id %q", pc, s1.CheckpointID)
	}
}

// P-GT-08
func getTuplePendingWrites(t *testing.T, s checkpoint.Saver) {
	c, tid := put(t, s, cfg(newUUID(), ""), emptyCP(), defaultMD(), nil), newUUID()
	putWrites(t, s, c, tid, w("ch", "val"))
	pws := mustTup(t, s, c).PendingWrites
	if len(pws) != 1 {
		t.Fatalf("pending writes = %+v, want 1", pws)
	}
	if pws[0].TaskID != tid || pws[0].Channel != "ch" || !equal(pws[0].Value, "val") {
		t.Fatalf("pending write = %+v, want (%q, ch, val)", pws[0], tid)
	}
}

// P-GT-09
func getTupleRespectsNamespace(t *testing.T, s checkpoint.Saver) {
	tid, root, child := newUUID(), emptyCP(), emptyCP()
	sr := put(t, s, cfg(tid, ""), root, defaultMD(), nil)
	sc := put(t, s, cfg(tid, "child:1"), child, defaultMD(), nil)
	if got := mustTup(t, s, sr).Checkpoint.ID; got != root.ID {
		t.Fatalf("root tuple = %q, want %q", got, root.ID)
	}
	if got := mustTup(t, s, sc).Checkpoint.ID; got != child.ID {
		t.Fatalf("child tuple = %q, want %q", got, child.ID)
	}
}

// P-GT-10: never fall back to the latest for a missing ID.
func getTupleNonexistentCheckpointID(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	put(t, s, cfg(tid, ""), emptyCP(), defaultMD(), nil)
	if tp := tup(t, s, cfg(tid, "").WithID(newUUID())); tp != nil {
		t.Fatalf("GetTuple of a missing id returned %q", tp.Checkpoint.ID)
	}
}
