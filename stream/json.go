package stream

import (
	"slices"
	"time"
)

// EventJSON is the JSON form of an Event, for tools that pass events on
// (the dashboard's Server-Sent Events, redcheck tail --json): snake_case
// names, the step null when the checkpoint has none, the channels sorted
// and never null.
type EventJSON struct {
	Cursor         string         `json:"cursor"`
	Stream         string         `json:"stream,omitempty"`
	ID             string         `json:"id,omitempty"`
	Time           time.Time      `json:"time"` // when Redis appended the event
	Type           EventType      `json:"type"`
	ThreadID       string         `json:"thread_id"`
	CheckpointNS   string         `json:"checkpoint_ns"`
	CheckpointID   string         `json:"checkpoint_id,omitempty"`
	ParentID       string         `json:"parent_id,omitempty"`
	Replaced       bool           `json:"replaced,omitempty"`
	Step           *int64         `json:"step"`
	Source         string         `json:"source,omitempty"`
	RunID          string         `json:"run_id,omitempty"`
	TS             string         `json:"ts,omitempty"`
	Channels       []string       `json:"channels"`
	TaskID         string         `json:"task_id,omitempty"`
	SourceThreadID string         `json:"source_thread_id,omitempty"`
	RunIDs         []string       `json:"run_ids,omitempty"`
	Strategy       string         `json:"strategy,omitempty"`
	Count          int64          `json:"count,omitempty"`
	Values         map[string]any `json:"values,omitempty"`
	Writes         []WriteJSON    `json:"writes,omitempty"`
	// ValueRefs: channel -> version of values published by reference
	// (read them with GetTuple).
	ValueRefs map[string]string `json:"value_refs,omitempty"`
	// Gap, in an event of type "gap", says which events were lost.
	Gap *GapError `json:"gap,omitempty"`
}

// WriteJSON is a pending write of a writes event in EventJSON.
type WriteJSON struct {
	TaskID  string `json:"task_id"`
	Channel string `json:"channel"`
	Value   any    `json:"value"`
}

// JSON returns the JSON form of ev. Channel and write values are any Go
// values a serializer decoded, which encoding/json may refuse (NaN, say):
// value, when not nil, maps each to one it accepts.
func (ev Event) JSON(value func(any) any) EventJSON {
	if value == nil {
		value = func(v any) any { return v }
	}
	out := EventJSON{
		Cursor: ev.Cursor, Stream: ev.Stream, ID: ev.ID, Time: ev.Time.UTC(), Type: ev.Type,
		ThreadID: ev.ThreadID, CheckpointNS: ev.CheckpointNS, CheckpointID: ev.CheckpointID, ParentID: ev.ParentID, Replaced: ev.Replaced,
		Source: ev.Source, RunID: ev.RunID, TS: ev.TS, Channels: slices.Sorted(slices.Values(ev.Channels)),
		TaskID: ev.TaskID, SourceThreadID: ev.SourceThreadID, RunIDs: ev.RunIDs, Strategy: ev.Strategy, Count: ev.Count,
		ValueRefs: ev.ValueRefs, Gap: ev.Gap,
	}
	if out.Channels == nil {
		out.Channels = []string{}
	}
	if ev.HasStep {
		step := ev.Step
		out.Step = &step
	}
	if ev.Values != nil {
		out.Values = make(map[string]any, len(ev.Values))
		for k, v := range ev.Values {
			out.Values[k] = value(v)
		}
	}
	for _, w := range ev.Writes {
		out.Writes = append(out.Writes, WriteJSON{TaskID: w.TaskID, Channel: w.Channel, Value: value(w.Value)})
	}
	return out
}
