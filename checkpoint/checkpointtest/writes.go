package checkpointtest

import (
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// putWritesCases is the PUT_WRITES group (contract §4.2, P-PW-01..10).
// Unless stated otherwise each case writes against a fresh empty checkpoint
// (emptyTarget). Write order is not asserted in this group.
var putWritesCases = []testCase[checkpoint.Saver]{
	base("put_writes_basic", putWritesBasic),
	base("put_writes_multiple_writes_same_task", putWritesMultipleWritesSameTask),
	base("put_writes_multiple_tasks", putWritesMultipleTasks),
	base("put_writes_preserves_task_id", putWritesPreservesTaskID),
	base("put_writes_preserves_channel_and_value", putWritesPreservesChannelAndValue),
	base("put_writes_task_path", putWritesTaskPath),
	base("put_writes_idempotent", putWritesIdempotent),
	base("put_writes_special_channels", putWritesSpecialChannels),
	base("put_writes_across_namespaces", putWritesAcrossNamespaces),
	base("put_writes_cleared_on_next_checkpoint", putWritesClearedOnNextCheckpoint),
}

// emptyTarget is the group's common setup: aput(CFG(T*), CP(), MD(), {}).
func emptyTarget(t *testing.T, s checkpoint.Saver) checkpoint.Config {
	t.Helper()
	return put(t, s, cfg(newUUID(), ""), emptyCP(), defaultMD(), nil)
}

// P-PW-01
func putWritesBasic(t *testing.T, s checkpoint.Saver) {
	c, tid := emptyTarget(t, s), newUUID()
	putWrites(t, s, c, tid, w("channel1", "value1"))
	tp := mustTup(t, s, c)
	if tp.PendingWrites == nil {
		t.Fatal("pending writes are nil")
	}
	wantOneWrite(t, tp, tid, "channel1", "value1")
}

// P-PW-02
func putWritesMultipleWritesSameTask(t *testing.T, s checkpoint.Saver) {
	c, tid := emptyTarget(t, s), newUUID()
	writes := []checkpoint.Write{w("ch1", "v1"), w("ch2", "v2"), w("ch3", "v3")}
	putWrites(t, s, c, tid, writes...)
	tp := mustTup(t, s, c)
	if len(tp.PendingWrites) != 3 {
		t.Fatalf("pending writes = %+v, want 3", tp.PendingWrites)
	}
	channels := map[string]bool{}
	for _, pw := range tp.PendingWrites {
		channels[pw.Channel] = true
	}
	if len(channels) != 3 || !channels["ch1"] || !channels["ch2"] || !channels["ch3"] {
		t.Fatalf("channels = %v, want {ch1, ch2, ch3}", channels)
	}
	for _, wr := range writes {
		wantOneWrite(t, tp, tid, wr.Channel, wr.Value)
	}
}

// P-PW-03
func putWritesMultipleTasks(t *testing.T, s checkpoint.Saver) {
	c, t1, t2 := emptyTarget(t, s), newUUID(), newUUID()
	putWrites(t, s, c, t1, w("ch", "from_t1"))
	putWrites(t, s, c, t2, w("ch", "from_t2"))
	tp := mustTup(t, s, c)
	if len(tp.PendingWrites) != 2 {
		t.Fatalf("pending writes = %+v, want 2", tp.PendingWrites)
	}
	wantOneWrite(t, tp, t1, "ch", "from_t1")
	wantOneWrite(t, tp, t2, "ch", "from_t2")
}

// P-PW-04
func putWritesPreservesTaskID(t *testing.T, s checkpoint.Saver) {
	c, tid := emptyTarget(t, s), newUUID()
	putWrites(t, s, c, tid, w("ch", "val"))
	for _, pw := range mustTup(t, s, c).PendingWrites {
		if pw.TaskID == tid {
			return
		}
	}
	t.Fatalf("no pending write has task id %q", tid)
}

// P-PW-05
func putWritesPreservesChannelAndValue(t *testing.T, s checkpoint.Saver) {
	c, tid := emptyTarget(t, s), newUUID()
	putWrites(t, s, c, tid, w("my_channel", map[string]any{"data": 123}))
	wantOneWrite(t, mustTup(t, s, c), tid, "my_channel", map[string]any{"data": 123})
}

// P-PW-06
func putWritesTaskPath(t *testing.T, s checkpoint.Saver) {
	c, tid := emptyTarget(t, s), newUUID()
	if err := s.PutWrites(testctx.Context(t), c, []checkpoint.Write{w("ch", "v")}, tid, "a:b:c"); err != nil {
		t.Fatalf("PutWrites with task path: %v", err)
	}
	if n := len(mustTup(t, s, c).PendingWrites); n != 1 {
		t.Fatalf("%d pending writes, want 1", n)
	}
}

// P-PW-07
func putWritesIdempotent(t *testing.T, s checkpoint.Saver) {
	c, tid := emptyTarget(t, s), newUUID()
	putWrites(t, s, c, tid, w("ch", "val"))
	putWrites(t, s, c, tid, w("ch", "val"))
	tp := mustTup(t, s, c)
	if len(tp.PendingWrites) != 1 {
		t.Fatalf("pending writes = %+v, want 1", tp.PendingWrites)
	}
	if n := len(matching(tp, tid, "ch")); n != 1 {
		t.Fatalf("%d writes for (tid, ch), want 1", n)
	}
}

// P-PW-08
func putWritesSpecialChannels(t *testing.T, s checkpoint.Saver) {
	c, tid := emptyTarget(t, s), newUUID()
	putWrites(t, s, c, tid,
		w(checkpoint.ErrorChannel, "something went wrong"),
		w(checkpoint.InterruptChannel, map[string]any{"reason": "human_input"}))
	tp := mustTup(t, s, c)
	channels := map[string]bool{}
	for _, pw := range tp.PendingWrites {
		channels[pw.Channel] = true
	}
	if !channels[checkpoint.ErrorChannel] || !channels[checkpoint.InterruptChannel] {
		t.Fatalf("channels = %v, want both %q and %q", channels, checkpoint.ErrorChannel, checkpoint.InterruptChannel)
	}
	wantOneWrite(t, tp, tid, checkpoint.ErrorChannel, "something went wrong")
	wantOneWrite(t, tp, tid, checkpoint.InterruptChannel, map[string]any{"reason": "human_input"})
}

// P-PW-09
func putWritesAcrossNamespaces(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	sr := put(t, s, cfg(tid, ""), emptyCP(), defaultMD(), nil)
	putWrites(t, s, sr, newUUID(), w("ch", "root_val"))
	sc := put(t, s, cfg(tid, "child:1"), emptyCP(), defaultMD(), nil)
	putWrites(t, s, sc, newUUID(), w("ch", "child_val"))
	wantSingleWrite(t, mustTup(t, s, sr), "ch", "root_val")
	wantSingleWrite(t, mustTup(t, s, sc), "ch", "child_val")
}

// P-PW-10
func putWritesClearedOnNextCheckpoint(t *testing.T, s checkpoint.Saver) {
	tid := newUUID()
	s1 := put(t, s, cfg(tid, ""), emptyCP(), md("loop", 0), nil)
	putWrites(t, s, s1, newUUID(), w("ch", "old_write"))
	s2 := put(t, s, childOf(s1), emptyCP(), md("loop", 1), nil)
	if pw := mustTup(t, s, s2).PendingWrites; len(pw) != 0 {
		t.Fatalf("new checkpoint has pending writes %+v, want none", pw)
	}
}
