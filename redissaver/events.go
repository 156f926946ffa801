package redissaver

import (
	"context"
	"slices"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/tracectx"
)

// Defaults of Events.
const (
	DefaultEventsMaxLen        = 10_000
	DefaultFeedMaxLen          = 100_000
	DefaultEventsMaxValueBytes = 64 << 10
	DefaultEventsMaxEventBytes = 64 << 10
	DefaultEventsStreamBytes   = 64 << 20
	DefaultEventsFeedBytes     = 512 << 20
	DefaultEventsRetainDeleted = time.Hour
)

// Events configure the events a Saver publishes. Every write (Put,
// PutWrites, DeleteThread, DeleteForRuns, CopyThread, Prune) appends an event
// to the thread's stream and to its shard's feed from inside the script that
// makes the write, so an event exists if and only if its write happened.
// Package stream reads them.
type Events struct {
	// Disabled switches publishing off.
	Disabled bool
	// MaxLen trims each thread's stream to about this many events (default
	// 10,000; Redis trims approximately, in whole macro nodes).
	MaxLen int64
	// FeedMaxLen trims each shard's feed to about this many events (default
	// 100,000).
	FeedMaxLen int64
	// IncludeValues copies the stored (serialized) values of the changed
	// channels and of the writes into the events, each up to MaxValueBytes.
	IncludeValues bool
	// MaxEventBytes bounds the values one event carries, all together
	// (default 64 KiB); values past it travel by reference.
	MaxEventBytes int
	// StreamBytes and FeedBytes bound, with IncludeValues, the bytes of
	// values a thread's stream and a shard's feed hold (defaults 64 MiB and
	// 512 MiB): their lengths are lowered to StreamBytes/(MaxEventBytes+1
	// KiB) and FeedBytes/(MaxEventBytes+1 KiB) events (1,008 and 8,065 with
	// the defaults) when that is below MaxLen and FeedMaxLen. Streams are
	// trimmed by length; these make the length a byte bound too.
	StreamBytes int64
	FeedBytes   int64
	// MaxValueBytes bounds a value copied into an event (default 64 KiB);
	// larger ones are left out of the event.
	MaxValueBytes int
	// RetainDeleted is how long a deleted thread's stream stays readable, so
	// that subscribers see the thread_deleted event (default one hour).
	RetainDeleted time.Duration
}

func (e Events) withDefaults() (Events, error) {
	if e.MaxLen == 0 {
		e.MaxLen = DefaultEventsMaxLen
	}
	if e.FeedMaxLen == 0 {
		e.FeedMaxLen = DefaultFeedMaxLen
	}
	if e.MaxValueBytes == 0 {
		e.MaxValueBytes = DefaultEventsMaxValueBytes
	}
	if e.RetainDeleted == 0 {
		e.RetainDeleted = DefaultEventsRetainDeleted
	}
	if e.MaxEventBytes == 0 {
		e.MaxEventBytes = DefaultEventsMaxEventBytes
	}
	if e.StreamBytes == 0 {
		e.StreamBytes = DefaultEventsStreamBytes
	}
	if e.FeedBytes == 0 {
		e.FeedBytes = DefaultEventsFeedBytes
	}
	if e.MaxLen < 1 || e.FeedMaxLen < 1 || e.MaxValueBytes < 1 || e.MaxEventBytes < 1 || e.StreamBytes < 1 || e.FeedBytes < 1 ||
		e.RetainDeleted < time.Millisecond {
		return e, invalidOptions("Events: MaxLen, FeedMaxLen, MaxValueBytes, MaxEventBytes, StreamBytes, FeedBytes and RetainDeleted must be positive")
	}
	if e.IncludeValues {
		per := int64(e.MaxEventBytes) + 1<<10 // values, and the rest of an event
		e.MaxLen = max(1, min(e.MaxLen, e.StreamBytes/per))
		e.FeedMaxLen = max(1, min(e.FeedMaxLen, e.FeedBytes/per))
	}
	return e, nil
}

// Event field names, as package stream decodes them.
const (
	evType     = "t"
	evThread   = "th" // encoded thread (keys.Encode)
	evNS       = "ns" // encoded namespace
	evID       = "id"
	evParent   = "p"
	evStep     = "step"
	evSource   = "src"
	evRun      = "run"
	evTS       = "ts"
	evChannels = "ch" // len ":" channel, repeated
	evTask     = "task"
	evSourceTh = "from" // CopyThread: the encoded source thread
	evStrategy = "strategy"
)

// eventBounds is the start of a script's event spec: stream maxlen (0: no
// event) and feed maxlen. put_writes.lua and delete_runs.lua take them alone
// and build their events themselves.
func (s *Saver) eventBounds() (maxlen, feedMaxlen int64) {
	if s.opts.Events.Disabled {
		return 0, 0
	}
	return s.opts.Events.MaxLen, s.opts.Events.FeedMaxLen
}

// eventSpec is the event part of a script's ARGV: eventBounds, the number
// of pairs, then the pairs: fields, and the trace context of ctx's span
// when it has a valid one (traceparent, tracestate; tracectx.Fields).
func (s *Saver) eventSpec(ctx context.Context, fields ...string) []any {
	maxlen, feedMaxlen := s.eventBounds()
	if maxlen == 0 {
		return []any{0, 0, 0}
	}
	trace := tracectx.Fields(ctx)
	out := make([]any, 0, 3+len(fields)+len(trace))
	out = append(out, maxlen, feedMaxlen, (len(fields)+len(trace))/2)
	for _, f := range fields {
		out = append(out, f)
	}
	for _, f := range trace {
		out = append(out, f)
	}
	return out
}

// noTrace is the trace context part of a script's ARGV without a span
// context (read only: callers append it).
var noTrace = []any{0}

// traceArgs is the trace context part of the ARGV of put_writes.lua and
// delete_runs.lua, which build their events: the number of pairs, then
// the pairs (tracectx.Fields); just 0 when ctx's span context is not
// valid, or events are off.
func (s *Saver) traceArgs(ctx context.Context) []any {
	if s.opts.Events.Disabled {
		return noTrace
	}
	trace := tracectx.Fields(ctx)
	if trace == nil {
		return noTrace // no allocation without tracing
	}
	out := make([]any, 0, 1+len(trace))
	out = append(out, len(trace)/2)
	for _, f := range trace {
		out = append(out, f)
	}
	return out
}

// checkpointEvent lists the fields of a checkpoint event.
func (s *Saver) checkpointEvent(cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string, blobs []string) []string {
	if s.opts.Events.Disabled {
		return nil
	}
	ev := []string{evType, "checkpoint", evThread, keys.Encode(cfg.ThreadID), evNS, keys.Encode(cfg.CheckpointNS), evID, cp.ID, evTS, cp.TS}
	if cfg.CheckpointID != "" {
		ev = append(ev, evParent, cfg.CheckpointID)
	}
	if step, ok := md["step"]; ok {
		if enc, err := checkpoint.EncodeMetadataValue(step); err == nil {
			ev = append(ev, evStep, string(enc))
		}
	}
	if src, ok := md["source"].(string); ok {
		ev = append(ev, evSource, src)
	}
	if run, ok := md["run_id"].(string); ok {
		ev = append(ev, evRun, run)
	}
	names := make([]string, 0, len(newVersions))
	for ch := range newVersions {
		names = append(names, ch)
	}
	slices.Sort(names) // exact bytes: the format's vectors pin them
	ev = append(ev, evChannels, joinNames(names))
	if s.opts.Events.IncludeValues {
		// blobs are BlobField(ch, ver), stored value pairs. A value within
		// the bounds travels in the event ("v:" channel); the others by
		// reference ("vref:" channel, whose value is the version), up to
		// maxEventValues fields in all; past that the event's "ch" field
		// still names every channel, and GetTuple reads the values.
		budget, fieldsLeft := s.opts.Events.MaxEventBytes, maxEventValues
		for i := 0; i+1 < len(blobs) && fieldsLeft > 0; i += 2 {
			ch, val := blobChannel(blobs[i]), blobs[i+1]
			if len(val) <= s.opts.Events.MaxValueBytes && len(val) <= budget {
				ev = append(ev, "v:"+ch, val)
				budget -= len(val)
				if s.opts.Encryption != nil && val != "" {
					// the version, for the consumer's AAD (docs/storage-format.md,
					// "Encrypted values")
					ev = append(ev, "vv:"+ch, cp.ChannelVersions[ch])
				}
			} else {
				ev = append(ev, "vref:"+ch, cp.ChannelVersions[ch])
			}
			fieldsLeft--
		}
	}
	return ev
}

// Bounds of the values one event carries, whatever the options: Redis
// scripts pass at most a few thousand arguments to one command, and a
// stream entry's size is memory held until it is trimmed.
const (
	maxEventValues = 256
)

var joinNames = codec.JoinNames

// blobChannel recovers the channel of a blob field (keys.BlobField).
func blobChannel(field string) string {
	n, rest, ok := cutLen(field)
	if !ok || n > len(rest) {
		return field
	}
	return rest[:n]
}
