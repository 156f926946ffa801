package checkpointtest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// This file holds the edge cases on stored values, metadata filters and
// error sentinels (see edgeCases in edge.go).

// Proves that metadata round-trips by value: nested maps and lists, a
// non-integral float, bools, a nil value (kept as a present key) and the
// empty-string key, with numbers equal by value.
func metadataRoundtrip(t *testing.T, s checkpoint.Saver) {
	m := checkpoint.Metadata{
		"source":  "loop",
		"step":    7,
		"parents": map[string]any{"": "parent-id", "child:1": "other"},
		"nested":  map[string]any{"list": []any{1, "two", 3.5, nil, map[string]any{"deep": true}}},
		"list":    []any{"a", 2},
		"float":   1.5,
		"bool":    false,
		"nil":     nil,
		"":        "empty key",
	}
	tp := mustTup(t, s, put(t, s, cfg(newUUID(), ""), emptyCP(), m, nil))
	if _, ok := tp.Metadata["nil"]; !ok {
		t.Fatal(`metadata key "nil" with a nil value is missing`)
	}
	wantValue(t, "metadata", tp.Metadata, m)
}

// listFilter lists thread tid (root namespace) with filter and returns the IDs.
func listFilter(t *testing.T, s checkpoint.Saver, tid string, filter checkpoint.Metadata) []string {
	t.Helper()
	query := q(tid, "")
	query.Filter = filter
	return idsOf(list(t, s, query))
}

// Proves that filters compare numbers by value: a float 1.0 filter finds the
// step stored as the integer 1 (and 1 finds 1.0), contract §7.10.
func filterFloatMatchesInt(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	a := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 1), nil)
	b := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 2, "score", 3.0), nil)
	wantIDs(t, "filter step 1.0", listFilter(t, s, tid, checkpoint.Metadata{"step": 1.0}), []string{a.CheckpointID})
	wantIDs(t, "filter score 3", listFilter(t, s, tid, checkpoint.Metadata{"score": int64(3)}), []string{b.CheckpointID})
}

// Proves that a nested map filter matches by deep equality (Python ==), not
// by containment: a filter missing one nested key does not match.
func filterNestedMap(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	a := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 1, "writes", map[string]any{"foo": "bar", "n": 1}), nil)
	put(t, s, cfg(tid, ""), emptyCP(), md("loop", 1, "writes", map[string]any{"foo": "baz", "n": 1}), nil)
	wantIDs(t, "filter on the whole nested map",
		listFilter(t, s, tid, checkpoint.Metadata{"step": 1, "writes": map[string]any{"n": 1.0, "foo": "bar"}}), []string{a.CheckpointID})
	wantIDs(t, "filter on part of the nested map",
		listFilter(t, s, tid, checkpoint.Metadata{"writes": map[string]any{"foo": "bar"}}), nil)
}

// Proves that a nil filter value matches a checkpoint without the key (and
// one whose value is nil) but not one with a non-nil value.
func filterNilMatchesMissing(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	missing := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0), nil)
	null := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0, "k", nil), nil)
	put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0, "k", "set"), nil)
	wantIDs(t, "filter k nil", listFilter(t, s, tid, checkpoint.Metadata{"k": nil}),
		[]string{null.CheckpointID, missing.CheckpointID})
}

// Proves that Before, Filter and Limit compose: the filter and the strict
// bound select, then the limit keeps the newest.
func listBeforeLimitFilter(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	extra := put(t, s, childOf(cfg(d.tid, "").WithID(d.ids[3])), emptyCP(), md("input", 4), nil)
	query := q(d.tid, "")
	query.Before, query.Filter, query.Limit = extra.CheckpointID, checkpoint.Metadata{"source": "input"}, 1
	wantIDs(t, "before+filter+limit 1", idsOf(list(t, s, query)), []string{d.ids[2]})
	query.Limit = 5
	wantIDs(t, "before+filter+limit 5", idsOf(list(t, s, query)), []string{d.ids[2], d.ids[0]})
}

// Proves that a limit above the number of matches returns them all.
func listLimitLargerThanResults(t *testing.T, s checkpoint.Saver) {
	d := setupListData(t, s)
	query := q(d.tid, "")
	query.Limit = 100
	wantIDs(t, "list limit 100", idsOf(list(t, s, query)), []string{d.ids[3], d.ids[2], d.ids[1], d.ids[0]})
}

// Proves that every type a Serializer must support survives a channel value
// round trip with its Go type (Serializer contract), and that a
// DeltaSnapshot stays distinct from its plain value, in channel values and
// in pending writes.
func channelValueTypesRoundtrip(t *testing.T, s checkpoint.Saver) {
	values := map[string]any{
		"nil":      nil,
		"bool":     true,
		"int64":    int64(-42),
		"float64":  1.5,
		"string":   "héllo",
		"bytes":    []byte{0, 1, 0xff},
		"list":     []any{int64(1), "two", []any{}, nil},
		"map":      map[string]any{"a": int64(1), "": "empty", "m": map[string]any{}},
		"snapshot": checkpoint.DeltaSnapshot{Value: []any{"x"}},
		"plain":    []any{"x"},
	}
	vs := map[string]string{}
	for k := range values {
		vs[k] = "1"
	}
	c := put(t, s, cfg(newUUID(), ""), cp(values, vs, nil), defaultMD(), vs)
	putWrites(t, s, c, "task", w("snap", checkpoint.DeltaSnapshot{Value: "s"}), w("bytes", []byte("b")))
	tp := mustTup(t, s, c)
	for k, want := range values {
		got, ok := channelValue(tp, k)
		if !ok {
			t.Fatalf("channel %q missing", k)
		}
		if reflect.TypeOf(got) != reflect.TypeOf(want) || !equal(got, want) {
			t.Fatalf("channel %q = %#v (%T), want %#v (%T)", k, got, got, want, want)
		}
	}
	wantOneWrite(t, tp, "task", "snap", checkpoint.DeltaSnapshot{Value: "s"})
	wantOneWrite(t, tp, "task", "bytes", []byte("b"))
}

// Proves contract §1.8: a channel in newVersions without a value is stored
// as empty and is absent on read, while its version stays.
func newVersionWithoutValue(t *testing.T, s checkpoint.Saver) {
	c := put(t, s, cfg(newUUID(), ""), cp(map[string]any{"a": "x"}, versions("a", "1", "gone", "1"), nil),
		defaultMD(), versions("a", "1", "gone", "1"))
	tp := mustTup(t, s, c)
	wantValue(t, "channel values", tp.Checkpoint.ChannelValues, map[string]any{"a": "x"})
	if tp.Checkpoint.ChannelVersions["gone"] != "1" {
		t.Fatalf("channel versions = %v, want gone at 1", tp.Checkpoint.ChannelVersions)
	}
}

// Proves that a copy of a checkpoint X put beside it, as LangGraph's fork
// (update_state as "__copy__") puts it (a new ID, X's channel versions, X's
// parent as its parent, no new versions), reads X's values back: the
// versions X wrote are named by the copy and not by its parent.
func forkCopyReadsValues(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	p := cp(map[string]any{"a": "a1", "b": "b1"}, versions("a", "1", "b", "1"), nil)
	p.V = 4
	pc := put(t, s, cfg(tid, ""), p, defaultMD(), versions("a", "1", "b", "1"))
	x := cp(map[string]any{"a": "a2", "b": "b1"}, versions("a", "2", "b", "1"), nil)
	x.V = 4
	xc := put(t, s, childOf(pc), x, md("loop", 1), versions("a", "2"))
	saved := mustTup(t, s, xc)
	fork := saved.Checkpoint
	fork.ID = checkpoint.NewID()
	fc := put(t, s, *saved.ParentConfig, fork, md("fork", 2), nil)
	tp := mustTup(t, s, fc)
	wantValue(t, "the fork's channel values", tp.Checkpoint.ChannelValues, map[string]any{"a": "a2", "b": "b1"})
	if tp.ParentConfig == nil || tp.ParentConfig.CheckpointID != pc.CheckpointID {
		t.Fatalf("the fork's parent = %+v, want %s", tp.ParentConfig, pc.CheckpointID)
	}
}

// Proves that VersionsSeen, including the "" node and "" channel keys JS
// uses, round-trips exactly (contract §7.9).
func versionsSeenEmptyKeys(t *testing.T, s checkpoint.Saver) {
	seen := map[string]map[string]string{
		"":     {"someChannel": "1", "": "2"},
		"node": {"a": "00000000000000000000000000000005.0.123"},
		"idle": {},
	}
	got := mustTup(t, s, put(t, s, cfg(newUUID(), ""), cp(nil, nil, seen), defaultMD(), nil)).Checkpoint.VersionsSeen
	if !reflect.DeepEqual(got, seen) {
		t.Fatalf("versions seen = %#v, want %#v", got, seen)
	}
}

// Proves that UpdatedChannels round-trips: nil comes back nil or empty, a
// list comes back equal, in order.
func updatedChannelsRoundtrip(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	none := put(t, s, cfg(tid, ""), emptyCP(), defaultMD(), nil)
	if got := mustTup(t, s, none).Checkpoint.UpdatedChannels; len(got) != 0 {
		t.Fatalf("updated channels = %q, want nil or empty", got)
	}
	ck := emptyCP()
	ck.UpdatedChannels = []string{"b", "a", ""}
	got := mustTup(t, s, put(t, s, childOf(none), ck, defaultMD(), nil)).Checkpoint.UpdatedChannels
	if !reflect.DeepEqual(got, ck.UpdatedChannels) {
		t.Fatalf("updated channels = %q, want %q", got, ck.UpdatedChannels)
	}
}

// Proves that TS is opaque: RFC 3339 with nanoseconds, Python's isoformat,
// a non-time string and "" all come back byte for byte.
func tsRoundtrip(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	for _, ts := range []string{"2024-07-01T12:00:00.123456789Z", "2024-07-01T12:00:00.000001+00:00", "not a time", ""} {
		ck := emptyCP()
		ck.TS = ts
		if got := mustTup(t, s, put(t, s, cfg(tid, ""), ck, defaultMD(), nil)).Checkpoint.TS; got != ts {
			t.Fatalf("ts = %q, want %q", got, ts)
		}
	}
}

// Proves that the format version V round-trips unchanged (1 as in the
// Python suite, 4 as in the JS one).
func vRoundtrip(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	for _, v := range []int{1, 4} {
		ck := emptyCP()
		ck.V = v
		if got := mustTup(t, s, put(t, s, cfg(tid, ""), ck, defaultMD(), nil)).Checkpoint.V; got != v {
			t.Fatalf("v = %d, want %d", got, v)
		}
	}
}

// Proves that Put refuses a Config without a thread ID with
// ErrInvalidConfig (contract J-PUT-09/10).
func putWithoutThreadID(t *testing.T, s checkpoint.Saver) {
	_, err := s.Put(testctx.Context(t), checkpoint.Config{}, emptyCP(), defaultMD(), map[string]string{})
	if !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Fatalf("Put without thread id: err = %v, want ErrInvalidConfig", err)
	}
}

// Proves that PutWrites refuses a Config without a thread ID or without a
// checkpoint ID with ErrInvalidConfig (contract J-PW-02/03).
func putWritesWithoutIDs(t *testing.T, s checkpoint.Saver) {
	c := emptyTarget(t, s)
	for _, bad := range []checkpoint.Config{
		{CheckpointNS: c.CheckpointNS, CheckpointID: c.CheckpointID},
		{ThreadID: c.ThreadID, CheckpointNS: c.CheckpointNS},
	} {
		err := s.PutWrites(testctx.Context(t), bad, []checkpoint.Write{w("ch", "v")}, "task", "")
		if !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Fatalf("PutWrites(%+v): err = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// Proves the legacy pending-sends migration (contract §1.9, D9): a
// checkpoint with V < 4 whose parent holds writes to TasksChannel reads back
// with their values, ordered by (task ID, index), as that channel's value
// and with a version; with V 4, or without such writes on the parent, or
// without a parent, nothing is injected.
func pendingSendsMigration(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	parent := put(t, s, cfg(tid, ""), cp(map[string]any{"a": "x"}, versions("a", "1"), nil), defaultMD(), versions("a", "1"))
	putWrites(t, s, parent, "task-b", w(checkpoint.TasksChannel, "send-b0"), w("other", "o"), w(checkpoint.TasksChannel, "send-b2"))
	putWrites(t, s, parent, "task-a", w(checkpoint.TasksChannel, "send-a0"))
	putChild := func(v int, p checkpoint.Config) *checkpoint.Tuple {
		ck := cp(map[string]any{"a": "x"}, versions("a", "1"), nil)
		ck.V = v
		return mustTup(t, s, put(t, s, childOf(p), ck, defaultMD(), nil))
	}

	migrated := putChild(1, parent)
	wantChannel(t, migrated, checkpoint.TasksChannel, []any{"send-a0", "send-b0", "send-b2"})
	if migrated.Checkpoint.ChannelVersions[checkpoint.TasksChannel] == "" {
		t.Fatalf("channel versions %v lack a version for %q", migrated.Checkpoint.ChannelVersions, checkpoint.TasksChannel)
	}
	wantChannel(t, migrated, "a", "x")

	noTasks := put(t, s, cfg(tid, "ns"), cp(map[string]any{"a": "x"}, versions("a", "1"), nil), defaultMD(), versions("a", "1"))
	putWrites(t, s, noTasks, "task", w("other", "o"))
	for name, tp := range map[string]*checkpoint.Tuple{
		"v4 child":               putChild(4, parent),
		"child of a plain write": putChild(1, noTasks),
		"root":                   mustTup(t, s, parent),
	} {
		_, inValues := tp.Checkpoint.ChannelValues[checkpoint.TasksChannel]
		_, inVersions := tp.Checkpoint.ChannelVersions[checkpoint.TasksChannel]
		if inValues || inVersions {
			t.Fatalf("%s: %q injected (values %v, versions %v)", name, checkpoint.TasksChannel,
				tp.Checkpoint.ChannelValues, tp.Checkpoint.ChannelVersions)
		}
	}
}
