package checkpointtest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// This file holds the Go equivalents of the fixtures of the Python suite
// (contract §3.1): generate_config, generate_checkpoint, generate_metadata,
// the chained put, and thin wrappers that fail the test on unexpected errors.

// newUUID returns a random version-4 UUID string, the Go counterpart of
// Python's uuid4(), used for thread, task and run IDs.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// cfg is generate_config: a Config for thread tid in namespace ns (the
// Python config always carries checkpoint_ns, "" by default).
func cfg(tid, ns string) checkpoint.Config {
	return checkpoint.Config{ThreadID: tid, CheckpointNS: ns}
}

// childOf returns the put config whose parent is the stored checkpoint
// parent (a chained put).
func childOf(parent checkpoint.Config) checkpoint.Config {
	return checkpoint.Config{ThreadID: parent.ThreadID, CheckpointNS: parent.CheckpointNS, CheckpointID: parent.CheckpointID}
}

// q is CFG(T, ns) used as a list config: one thread, one namespace.
func q(tid, ns string) checkpoint.ListQuery {
	return checkpoint.ListQuery{ThreadID: tid, CheckpointNS: checkpoint.NS(ns)}
}

// cp is generate_checkpoint: V 1, a fresh monotonic ID, the current time as
// ts, and non-nil maps.
func cp(values map[string]any, versions map[string]string, seen map[string]map[string]string) checkpoint.Checkpoint {
	if values == nil {
		values = map[string]any{}
	}
	if versions == nil {
		versions = map[string]string{}
	}
	if seen == nil {
		seen = map[string]map[string]string{}
	}
	return checkpoint.Checkpoint{
		V:               1,
		ID:              checkpoint.NewID(),
		TS:              time.Now().UTC().Format(time.RFC3339Nano),
		ChannelValues:   values,
		ChannelVersions: versions,
		VersionsSeen:    seen,
	}
}

// emptyCP is CP() with no arguments.
func emptyCP() checkpoint.Checkpoint { return cp(nil, nil, nil) }

// md is generate_metadata(source, step, **extra): extra is a list of
// key/value pairs.
func md(source string, step int, extra ...any) checkpoint.Metadata {
	m := checkpoint.Metadata{"source": source, "step": step, "parents": map[string]any{}}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

// defaultMD is MD() with no arguments.
func defaultMD() checkpoint.Metadata { return md("loop", 0) }

// versions builds a version map from channel/version pairs.
func versions(pairs ...string) map[string]string {
	m := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}

// put stores a checkpoint and fails the test on error.
func put(t *testing.T, s checkpoint.Saver, c checkpoint.Config, ck checkpoint.Checkpoint, m checkpoint.Metadata, nv map[string]string) checkpoint.Config {
	t.Helper()
	if nv == nil {
		nv = map[string]string{}
	}
	got, err := s.Put(testctx.Context(t), c, ck, m, nv)
	if err != nil {
		t.Fatalf("Put(%+v, id %q): %v", c, ck.ID, err)
	}
	return got
}

// putWrites stores writes and fails the test on error.
func putWrites(t *testing.T, s checkpoint.Saver, c checkpoint.Config, taskID string, writes ...checkpoint.Write) {
	t.Helper()
	if err := s.PutWrites(testctx.Context(t), c, writes, taskID, ""); err != nil {
		t.Fatalf("PutWrites(%+v, task %q): %v", c, taskID, err)
	}
}

// w builds a Write.
func w(channel string, value any) checkpoint.Write {
	return checkpoint.Write{Channel: channel, Value: value}
}

// tup is aget_tuple: nil when the saver reports ErrNotFound, fatal on any
// other error.
func tup(t *testing.T, s checkpoint.Saver, c checkpoint.Config) *checkpoint.Tuple {
	t.Helper()
	got, err := s.GetTuple(testctx.Context(t), c)
	if errors.Is(err, checkpoint.ErrNotFound) {
		if got != nil {
			t.Fatalf("GetTuple(%+v) returned a tuple together with ErrNotFound", c)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("GetTuple(%+v): %v", c, err)
	}
	if got == nil {
		t.Fatalf("GetTuple(%+v) returned (nil, nil); want ErrNotFound for a missing checkpoint", c)
	}
	return got
}

// mustTup is tup that also fails when the checkpoint is missing.
func mustTup(t *testing.T, s checkpoint.Saver, c checkpoint.Config) *checkpoint.Tuple {
	t.Helper()
	got := tup(t, s, c)
	if got == nil {
		t.Fatalf("GetTuple(%+v) = not found, want a tuple", c)
	}
	return got
}

// list is LIST(...): the collected results of List, fatal on error.
func list(t *testing.T, s checkpoint.Saver, query checkpoint.ListQuery) []*checkpoint.Tuple {
	t.Helper()
	return collect(t, s.List(testctx.Context(t), query))
}

// collect drains a List iterator.
func collect(t *testing.T, seq iter.Seq2[*checkpoint.Tuple, error]) []*checkpoint.Tuple {
	t.Helper()
	var out []*checkpoint.Tuple
	for tp, err := range seq {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if tp == nil {
			t.Fatalf("List yielded a nil tuple without an error")
		}
		out = append(out, tp)
	}
	return out
}

// chain is the chained put of the Python suite: n puts on (tid, ns), each
// the child of the previous, with CP() and the metadata mdFor(i). It returns
// the stored configs, oldest first.
func chain(t *testing.T, s checkpoint.Saver, tid, ns string, n int, mdFor func(i int) checkpoint.Metadata) []checkpoint.Config {
	t.Helper()
	out := make([]checkpoint.Config, 0, n)
	c := cfg(tid, ns)
	for i := range n {
		stored := put(t, s, c, emptyCP(), mdFor(i), nil)
		out = append(out, stored)
		c = childOf(stored)
	}
	return out
}

// stepMD is MD(step=i).
func stepMD(i int) checkpoint.Metadata { return md("loop", i) }

// idsOf returns the checkpoint IDs of tuples, in order.
func idsOf(tuples []*checkpoint.Tuple) []string {
	out := make([]string, len(tuples))
	for i, tp := range tuples {
		out[i] = tp.Checkpoint.ID
	}
	return out
}

// configIDs returns the checkpoint IDs of stored configs, in order.
func configIDs(cs []checkpoint.Config) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.CheckpointID
	}
	return out
}

// wantIDs fails unless got equals want element by element.
func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: ids = %q, want %q", what, got, want)
	}
}

// wantLen fails unless len(got) == n.
func wantLen(t *testing.T, what string, got []*checkpoint.Tuple, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d results (ids %q), want %d", what, len(got), idsOf(got), n)
	}
}

// matching returns the pending writes of tp with the given task and channel.
func matching(tp *checkpoint.Tuple, taskID, channel string) []checkpoint.PendingWrite {
	var out []checkpoint.PendingWrite
	for _, pw := range tp.PendingWrites {
		if pw.TaskID == taskID && pw.Channel == channel {
			out = append(out, pw)
		}
	}
	return out
}

// wantOneWrite fails unless tp has exactly one write for (taskID, channel)
// and its value equals value.
func wantOneWrite(t *testing.T, tp *checkpoint.Tuple, taskID, channel string, value any) {
	t.Helper()
	m := matching(tp, taskID, channel)
	if len(m) != 1 {
		t.Fatalf("writes for (%q, %q): %d, want exactly 1 (all: %+v)", taskID, channel, len(m), tp.PendingWrites)
	}
	if !equal(m[0].Value, value) {
		t.Fatalf("write (%q, %q) value = %#v, want %#v", taskID, channel, m[0].Value, value)
	}
}

// wantSingleWrite fails unless tp has exactly one pending write, on channel
// with value (the task is not checked).
func wantSingleWrite(t *testing.T, tp *checkpoint.Tuple, channel string, value any) {
	t.Helper()
	if len(tp.PendingWrites) != 1 {
		t.Fatalf("pending writes = %+v, want exactly 1", tp.PendingWrites)
	}
	pw := tp.PendingWrites[0]
	if pw.Channel != channel || !equal(pw.Value, value) {
		t.Fatalf("pending write = (%q, %#v), want (%q, %#v)", pw.Channel, pw.Value, channel, value)
	}
}

// wantValue fails unless the metadata or channel value got equals want.
func wantValue(t *testing.T, what string, got, want any) {
	t.Helper()
	if !equal(got, want) {
		t.Fatalf("%s = %#v, want %#v", what, got, want)
	}
}

// channelValue returns tp's value for channel and whether it is present.
func channelValue(tp *checkpoint.Tuple, channel string) (any, bool) {
	v, ok := tp.Checkpoint.ChannelValues[channel]
	return v, ok
}

// wantChannel fails unless tp holds want for channel.
func wantChannel(t *testing.T, tp *checkpoint.Tuple, channel string, want any) {
	t.Helper()
	got, ok := channelValue(tp, channel)
	if !ok {
		t.Fatalf("channel %q missing from channel values %#v", channel, tp.Checkpoint.ChannelValues)
	}
	wantValue(t, "channel "+channel, got, want)
}

// versionMajor is Python's str(v).split(".")[0], the comparison the suite
// uses for channel versions.
func versionMajor(v string) string {
	major, _, _ := strings.Cut(v, ".")
	return major
}

// unwrap returns the value inside a DeltaSnapshot, or v itself.
func unwrap(v any) any {
	if s, ok := v.(checkpoint.DeltaSnapshot); ok {
		return s.Value
	}
	return v
}

// writeValues is vals(x): the values of a delta history's writes.
func writeValues(h checkpoint.DeltaHistory) []any {
	out := make([]any, len(h.Writes))
	for i, pw := range h.Writes {
		out[i] = pw.Value
	}
	return out
}

// runIDs returns the metadata run_id values of tuples.
func runIDs(tuples []*checkpoint.Tuple) []string {
	var out []string
	for _, tp := range tuples {
		if r, ok := tp.Metadata["run_id"].(string); ok {
			out = append(out, r)
		}
	}
	return out
}
