package checkpointtest

import (
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

// putCases is the PUT group (contract §4.1, P-PUT-01..17), in run order.
var putCases = []testCase[checkpoint.Saver]{
	base("put_returns_config", putReturnsConfig),
	base("put_roundtrip", putRoundtrip),
	base("put_preserves_channel_values", putPreservesChannelValues),
	base("put_preserves_channel_versions", putPreservesChannelVersions),
	base("put_preserves_versions_seen", putPreservesVersionsSeen),
	base("put_preserves_metadata", putPreservesMetadata),
	base("put_root_namespace", putNamespace("", true)),
	base("put_child_namespace", putNamespace("child:abc", true)),
	base("put_default_namespace", putNamespace("", false)),
	base("put_multiple_checkpoints_same_thread", putMultipleCheckpointsSameThread),
	base("put_multiple_threads_isolated", putMultipleThreadsIsolated),
	base("put_parent_config", putParentConfig),
	base("put_incremental_channel_update", putIncrementalChannelUpdate),
	base("put_new_channel_added", putNewChannelAdded),
	base("put_channel_removed", putChannelRemoved),
	base("put_preserves_run_id", putPreservesRunID),
	base("put_preserves_versions_seen_values", putPreservesVersionsSeenValues),
}

// P-PUT-01
func putReturnsConfig(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	ck := cp(map[string]any{"k": "v"}, versions("k", "1"), nil)
	r := put(t, s, cfg(tid, ""), ck, defaultMD(), versions("k", "1"))
	if r.ThreadID != tid || r.CheckpointNS != "" {
		t.Fatalf("returned config %+v, want thread %q and namespace \"\"", r, tid)
	}
	if r.CheckpointID != ck.ID {
		t.Fatalf("returned checkpoint id %q, want %q", r.CheckpointID, ck.ID)
	}
}

// P-PUT-02
func putRoundtrip(t *testing.T, s checkpoint.Saver) {
	ck := cp(map[string]any{"msg": "hello"}, versions("msg", "1"), nil)
	stored := put(t, s, cfg(newUUID(), ""), ck, md("input", -1), versions("msg", "1"))
	tp := mustTup(t, s, stored)
	if tp.Checkpoint.ID != ck.ID {
		t.Fatalf("id = %q, want %q", tp.Checkpoint.ID, ck.ID)
	}
	wantValue(t, "channel values", tp.Checkpoint.ChannelValues, map[string]any{"msg": "hello"})
}

// P-PUT-03
func putPreservesChannelValues(t *testing.T, s checkpoint.Saver) {
	values := map[string]any{
		"str_val":  "hello",
		"int_val":  42,
		"list_val": []any{1, 2, 3},
		"dict_val": map[string]any{"nested": true},
	}
	vs := map[string]string{}
	for k := range values {
		vs[k] = "1"
	}
	stored := put(t, s, cfg(newUUID(), ""), cp(values, vs, nil), defaultMD(), vs)
	tp := mustTup(t, s, stored)
	for k, want := range values {
		got := tp.Checkpoint.ChannelValues[k]
		wantValue(t, "channel "+k, got, want)
	}
}

// P-PUT-04
func putPreservesChannelVersions(t *testing.T, s checkpoint.Saver) {
	vs := versions("a", "1", "b", "2")
	stored := put(t, s, cfg(newUUID(), ""), cp(map[string]any{"a": "x", "b": "y"}, vs, nil), defaultMD(), vs)
	tp := mustTup(t, s, stored)
	for k, want := range vs {
		got, ok := tp.Checkpoint.ChannelVersions[k]
		if !ok {
			t.Fatalf("channel version %q missing from %v", k, tp.Checkpoint.ChannelVersions)
		}
		if versionMajor(got) != versionMajor(want) {
			t.Fatalf("channel version %q = %q, want %q", k, got, want)
		}
	}
}

// P-PUT-05
func putPreservesVersionsSeen(t *testing.T, s checkpoint.Saver) {
	seen := map[string]map[string]string{"node1": {"ch": "1"}, "node2": {"ch": "2"}}
	stored := put(t, s, cfg(newUUID(), ""), cp(nil, nil, seen), defaultMD(), nil)
	tp := mustTup(t, s, stored)
	for _, node := range []string{"node1", "node2"} {
		if _, ok := tp.Checkpoint.VersionsSeen[node]; !ok {
			t.Fatalf("versions seen %v lacks node %q", tp.Checkpoint.VersionsSeen, node)
		}
	}
}

// P-PUT-06
func putPreservesMetadata(t *testing.T, s checkpoint.Saver) {
	stored := put(t, s, cfg(newUUID(), ""), emptyCP(), md("loop", 3, "custom_key", "custom_value"), nil)
	tp := mustTup(t, s, stored)
	wantValue(t, "metadata source", tp.Metadata["source"], "loop")
	wantValue(t, "metadata step", tp.Metadata["step"], 3)
	wantValue(t, "metadata custom_key", tp.Metadata["custom_key"], "custom_value")
}

// putNamespace covers P-PUT-07 (root), P-PUT-08 (child, the namespace holds
// ':') and P-PUT-09 (default: Python passes "" explicitly). The Go Config
// always carries the namespace, so the tuple's namespace is checked in every
// case except P-PUT-09, which only asserts the tuple exists.
func putNamespace(ns string, child bool) func(t *testing.T, s checkpoint.Saver) {
	return func(t *testing.T, s checkpoint.Saver) {
		stored := put(t, s, cfg(newUUID(), ns), emptyCP(), defaultMD(), nil)
		tp := mustTup(t, s, stored)
		if child || ns == "" {
			if tp.Config.CheckpointNS != ns {
				t.Fatalf("tuple namespace = %q, want %q", tp.Config.CheckpointNS, ns)
			}
		}
	}
}

// P-PUT-10
func putMultipleCheckpointsSameThread(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	stored := chain(t, s, tid, "", 3, stepMD)
	for _, id := range configIDs(stored) {
		tp := mustTup(t, s, cfg(tid, "").WithID(id))
		if tp.Checkpoint.ID != id {
			t.Fatalf("GetTuple(%q) returned checkpoint %q", id, tp.Checkpoint.ID)
		}
	}
}

// P-PUT-11
func putMultipleThreadsIsolated(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newUUID(), newUUID()
	put(t, s, cfg(t1, ""), cp(map[string]any{"x": "thread1"}, versions("x", "1"), nil), defaultMD(), versions("x", "1"))
	put(t, s, cfg(t2, ""), cp(map[string]any{"x": "thread2"}, versions("x", "1"), nil), defaultMD(), versions("x", "1"))
	wantChannel(t, mustTup(t, s, cfg(t1, "")), "x", "thread1")
	wantChannel(t, mustTup(t, s, cfg(t2, "")), "x", "thread2")
}

// P-PUT-12
func putParentConfig(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	s1 := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0), nil)
	s2 := put(t, s, childOf(s1), emptyCP(), md("loop", 1), nil)
	tp := mustTup(t, s, s2)
	if tp.ParentConfig == nil {
		t.Fatal("parent config is nil")
	}
	if tp.ParentConfig.CheckpointID != s1.CheckpointID {
		t.Fatalf("parent id = %q, want %q", tp.ParentConfig.CheckpointID, s1.CheckpointID)
	}
}

// P-PUT-13
func putIncrementalChannelUpdate(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	s1 := put(t, s, cfg(tid, ""),
		cp(map[string]any{"a": "v1", "b": "v2"}, versions("a", "1", "b", "1"), nil),
		md("loop", 0), versions("a", "1", "b", "1"))
	s2 := put(t, s, childOf(s1),
		cp(map[string]any{"a": "v1_updated", "b": "v2"}, versions("a", "2", "b", "1"), nil),
		md("loop", 1), versions("a", "2"))
	tp2 := mustTup(t, s, s2)
	wantChannel(t, tp2, "a", "v1_updated")
	wantChannel(t, tp2, "b", "v2")
	tp1 := mustTup(t, s, s1)
	wantChannel(t, tp1, "a", "v1")
	wantChannel(t, tp1, "b", "v2")
}

// P-PUT-14
func putNewChannelAdded(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	s1 := put(t, s, cfg(tid, ""), cp(map[string]any{"a": "v1"}, versions("a", "1"), nil), md("loop", 0), versions("a", "1"))
	s2 := put(t, s, childOf(s1),
		cp(map[string]any{"a": "v1", "b": "new_channel"}, versions("a", "1", "b", "1"), nil),
		md("loop", 1), versions("b", "1"))
	tp := mustTup(t, s, s2)
	wantChannel(t, tp, "a", "v1")
	wantChannel(t, tp, "b", "new_channel")
}

// P-PUT-15
func putChannelRemoved(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	s1 := put(t, s, cfg(tid, ""),
		cp(map[string]any{"a": "v1", "b": "v2"}, versions("a", "1", "b", "1"), nil),
		md("loop", 0), versions("a", "1", "b", "1"))
	s2 := put(t, s, childOf(s1), cp(map[string]any{"a": "v1_updated"}, versions("a", "2"), nil), md("loop", 1), versions("a", "2"))
	tp := mustTup(t, s, s2)
	wantChannel(t, tp, "a", "v1_updated")
	if v, ok := channelValue(tp, "b"); ok {
		t.Fatalf("channel b present (%#v) although it is not in channel versions", v)
	}
}

// P-PUT-16
func putPreservesRunID(t *testing.T, s checkpoint.Saver) {
	rid := newUUID()
	stored := put(t, s, cfg(newUUID(), ""), emptyCP(), md("loop", 0, "run_id", rid), nil)
	wantValue(t, "metadata run_id", mustTup(t, s, stored).Metadata["run_id"], rid)
}

// P-PUT-17
func putPreservesVersionsSeenValues(t *testing.T, s checkpoint.Saver) {
	seen := map[string]map[string]string{"node1": {"ch_a": "1", "ch_b": "2"}, "node2": {"ch_a": "3"}}
	stored := put(t, s, cfg(newUUID(), ""), cp(nil, nil, seen), defaultMD(), nil)
	got := mustTup(t, s, stored).Checkpoint.VersionsSeen
	for node, chans := range seen {
		for ch, want := range chans {
			v, ok := got[node][ch]
			if !ok {
				t.Fatalf("versions seen [%q][%q] missing from %v", node, ch, got)
			}
			if versionMajor(v) != versionMajor(want) {
				t.Fatalf("versions seen [%q][%q] = %q, want %q", node, ch, v, want)
			}
		}
	}
}
