package stream

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/tracectx"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// EventType names what a write did.
type EventType string

// The event types.
const (
	TypeCheckpoint    EventType = "checkpoint"     // Put stored a checkpoint
	TypeWrites        EventType = "writes"         // PutWrites stored pending writes
	TypeThreadDeleted EventType = "thread_deleted" // DeleteThread (or Prune with PruneDelete)
	TypeRunsDeleted   EventType = "runs_deleted"   // DeleteForRuns removed checkpoints of the thread
	TypeThreadCopied  EventType = "thread_copied"  // CopyThread wrote the thread (the target)
	TypePruned        EventType = "pruned"         // Prune with PruneKeepLatest removed checkpoints
	// TypePrefixReset: a saver found its prefix emptied (Redis restarted
	// without persistence, FLUSHALL, a failover to an empty replica) and
	// created it again: every checkpoint and event before it is gone. It
	// names no thread; it is published on every shard's feed.
	TypePrefixReset EventType = "prefix_reset"
)

// ErrMalformedEvent is returned for a stream entry that redcheck did not
// write (or that was damaged). It wraps checkpoint.ErrSerialization.
var ErrMalformedEvent = fmt.Errorf("stream: malformed event: %w", checkpoint.ErrSerialization)

// Event is one write, as announced by the script that made it.
type Event struct {
	// ID is the entry's ID in its stream, Stream the stream's key.
	ID     string
	Stream string
	// Cursor resumes a subscription right after this event (Query.From).
	Cursor string
	// Time is when Redis appended the event (from the ID), in milliseconds.
	Time time.Time

	Type         EventType
	ThreadID     string
	CheckpointNS string // checkpoint and writes events
	CheckpointID string // checkpoint and writes events
	ParentID     string // checkpoint events; "" for a root checkpoint
	// Replaced: a checkpoint event of a re-put, which replaced the stored
	// checkpoint of that id (its pending writes kept); from a "re" field.
	Replaced bool
	Step     int64 // checkpoint events with a metadata "step"
	HasStep  bool
	Source   string   // metadata "source"
	RunID    string   // metadata "run_id"
	TS       string   // the checkpoint's TS
	Channels []string // checkpoint: channels with new versions; writes: channels written
	TaskID   string   // writes events

	SourceThreadID string   // thread_copied: the thread copied from
	RunIDs         []string // runs_deleted
	Strategy       string   // pruned
	Count          int64    // checkpoints deleted, pruned or copied

	// Values holds, when the saver includes values (redissaver.Events),
	// checkpoint events' channel values by channel.
	Values map[string]any
	// Writes holds, when the saver includes values, writes events' stored
	// writes, in the order of the call.
	Writes []checkpoint.PendingWrite
	// ValueRefs holds, for checkpoint events, the channels whose values the
	// saver published by reference rather than inline (too large for an
	// event): channel -> version. The value is the checkpoint's own, read
	// with the saver's GetTuple (thread, namespace and checkpoint ID of the
	// event); from a "vref:<channel>" field.
	ValueRefs map[string]string

	// TraceParent and TraceState are the W3C trace context of the span
	// that made the write (its traceparent and tracestate), "" when the
	// writer had none; from the "traceparent" and "tracestate" fields.
	// Consume links each handler's span to it; SpanContext parses it for a
	// consumer of its own.
	TraceParent string
	TraceState  string

	// Gap, for an event of TypeGap only, says which events were lost.
	Gap *GapError
}

// SpanContext is the span context of the write the event announces (a
// remote one, from TraceParent and TraceState), for a span that handles
// the event to link to (trace.WithLinks(trace.Link{SpanContext: ...})); an
// invalid one (IsValid false) when the event carries none or a malformed
// one.
func (ev Event) SpanContext() trace.SpanContext {
	return tracectx.SpanContext(ev.TraceParent, ev.TraceState)
}

// DecodeEvent decodes a stream entry. Values are decoded with ser (nil: the
// msgpack serializer). Errors wrap ErrMalformedEvent; it never panics. It
// holds no keyring: an encrypted value is refused with an error wrapping
// checkpoint.ErrDecrypt too (Subscriber.DecodeEvent decodes with the
// subscriber's Options.Encryption).
func DecodeEvent(msg redis.XMessage, ser checkpoint.Serializer) (Event, error) {
	return decodeEvent(context.Background(), msg, valueDecoder{ser: ser})
}

// DecodeEvent decodes a stream entry as Subscribe and Consume do: values
// with the subscriber's Serializer, and opened with its Encryption keyring
// (docs/storage-format.md, "Encrypted values"). A value that cannot be opened
// is an error wrapping both ErrMalformedEvent and checkpoint.ErrDecrypt.
func (s *Subscriber) DecodeEvent(ctx context.Context, msg redis.XMessage) (Event, error) {
	return decodeEvent(ctx, msg, s.valueDecoder())
}

func decodeEvent(ctx context.Context, msg redis.XMessage, dec valueDecoder) (Event, error) {
	if dec.ser == nil {
		dec.ser = checkpoint.MsgpackSerializer{}
	}
	ev := Event{ID: msg.ID}
	ms, _, ok := strings.Cut(msg.ID, "-")
	if n, err := strconv.ParseInt(ms, 10, 64); ok && err == nil {
		ev.Time = time.UnixMilli(n)
	} else {
		return ev, fmt.Errorf("%w: entry id %q", ErrMalformedEvent, msg.ID)
	}
	str := func(k string) string { s, _ := msg.Values[k].(string); return s }
	ev.Type = EventType(str("t"))
	switch ev.Type {
	case TypeCheckpoint, TypeWrites, TypeThreadDeleted, TypeRunsDeleted, TypeThreadCopied, TypePruned:
	case TypePrefixReset:
		return ev, nil
	default:
		return ev, fmt.Errorf("%w: type %q", ErrMalformedEvent, ev.Type)
	}
	var err error
	if ev.ThreadID, err = keys.Decode(str("th")); err != nil || ev.ThreadID == "" {
		return ev, fmt.Errorf("%w: thread %q", ErrMalformedEvent, str("th"))
	}
	if ev.CheckpointNS, err = keys.Decode(str("ns")); err != nil {
		return ev, fmt.Errorf("%w: namespace %q", ErrMalformedEvent, str("ns"))
	}
	if from := str("from"); from != "" {
		if ev.SourceThreadID, err = keys.Decode(from); err != nil {
			return ev, fmt.Errorf("%w: source thread %q", ErrMalformedEvent, from)
		}
	}
	ev.CheckpointID, ev.ParentID, ev.TaskID = str("id"), str("p"), str("task")
	ev.Source, ev.RunID, ev.TS, ev.Strategy = str("src"), str("run"), str("ts"), str("strategy")
	ev.Replaced = str("re") == "1"
	ev.TraceParent, ev.TraceState = str(tracectx.FieldParent), str(tracectx.FieldState)
	if s := str("step"); s != "" {
		if ev.Step, err = strconv.ParseInt(s, 10, 64); err != nil {
			return ev, fmt.Errorf("%w: step %q", ErrMalformedEvent, s)
		}
		ev.HasStep = true
	}
	if s := str("n"); s != "" {
		if ev.Count, err = strconv.ParseInt(s, 10, 64); err != nil {
			return ev, fmt.Errorf("%w: count %q", ErrMalformedEvent, s)
		}
	}
	if ev.Channels, ok = codec.SplitNames(str("ch")); !ok {
		return ev, fmt.Errorf("%w: channels %q", ErrMalformedEvent, str("ch"))
	}
	if ev.RunIDs, ok = codec.SplitNames(str("runs")); !ok {
		return ev, fmt.Errorf("%w: run ids %q", ErrMalformedEvent, str("runs"))
	}
	if err := decodeValues(ctx, &ev, msg.Values, dec); err != nil {
		return ev, err
	}
	return ev, nil
}

// decodeValues decodes the "v:" fields: channel values of a checkpoint
// event (stored values: pack(type, data), or its compressed form), writes
// of a writes event (pack(channel, task path, stored value), keyed by
// position); and the "vref:" fields: channel -> version of values
// published by reference.
func decodeValues(ctx context.Context, ev *Event, fields map[string]any, dec valueDecoder) error {
	type posWrite struct {
		pos int
		w   checkpoint.PendingWrite
	}
	var writes []posWrite
	for k, raw := range fields {
		stored, _ := raw.(string)
		if ch, ok := strings.CutPrefix(k, "vref:"); ok {
			if ch == "" || stored == "" {
				return fmt.Errorf("%w: value reference %q", ErrMalformedEvent, k)
			}
			if ev.ValueRefs == nil {
				ev.ValueRefs = map[string]string{}
			}
			ev.ValueRefs[ch] = stored
			continue
		}
		name, ok := strings.CutPrefix(k, "v:")
		if !ok {
			continue
		}
		if ev.Type == TypeWrites {
			pos, err := strconv.Atoi(name)
			var parts [3]string // channel, task path, stored value
			if err != nil || !codec.Unpack(stored, parts[:]) {
				return fmt.Errorf("%w: write value %q", ErrMalformedEvent, k)
			}
			v, err := dec.load(ctx, ev, writeAAD{pos: pos, channel: parts[0]}, parts[2])
			if err != nil {
				return fmt.Errorf("%w: write value %q: %w", ErrMalformedEvent, k, err)
			}
			writes = append(writes, posWrite{pos, checkpoint.PendingWrite{TaskID: ev.TaskID, Channel: parts[0], Value: v}})
			continue
		}
		if stored == "" {
			continue // the empty marker: a version without a value
		}
		ver, _ := fields["vv:"+name].(string)
		v, err := dec.load(ctx, ev, channelAAD{channel: name, version: ver}, stored)
		if err != nil {
			return fmt.Errorf("%w: value %q: %w", ErrMalformedEvent, k, err)
		}
		if ev.Values == nil {
			ev.Values = map[string]any{}
		}
		ev.Values[name] = v
	}
	if len(writes) > 0 {
		for i := 1; i < len(writes); i++ { // a handful: insertion sort by position
			for j := i; j > 0 && writes[j].pos < writes[j-1].pos; j-- {
				writes[j], writes[j-1] = writes[j-1], writes[j]
			}
		}
		for _, w := range writes {
			ev.Writes = append(ev.Writes, w.w)
		}
	}
	return nil
}
