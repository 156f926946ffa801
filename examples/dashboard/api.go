package main

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/stream"
)

// Limits of the JSON API.
const (
	// threadScan is how many of the newest checkpoints /api/threads reads
	// to find the threads: a thread without a checkpoint among them is not
	// listed.
	threadScan = 2000
	// defaultPage and maxPage bound a page of /api/threads/{id}/checkpoints.
	defaultPage = 50
	maxPage     = 500
)

// checkpointRow is one line of a thread's timeline.
type checkpointRow struct {
	ThreadID     string `json:"thread_id"`
	CheckpointNS string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
	ParentID     string `json:"parent_id,omitempty"`
	Step         *int64 `json:"step"`
	Source       string `json:"source,omitempty"`
	TS           string `json:"ts,omitempty"`
	// Channels are the channels this checkpoint changed: its
	// UpdatedChannels, else those whose version differs from the parent's
	// (every channel of a root checkpoint); null when the parent is not at
	// hand.
	Channels []string `json:"channels"`
	// Writes are the checkpoint's pending writes in the shape of package
	// stream's events (stream.WriteJSON), without their values (null): the
	// state panel shows them.
	Writes []stream.WriteJSON `json:"writes"`
}

// threadRow is one thread of /api/threads.
type threadRow struct {
	ThreadID string        `json:"thread_id"`
	Latest   checkpointRow `json:"latest"`
}

// threads serves GET /api/threads: every thread with a checkpoint among the
// threadScan newest, with its latest checkpoint, by thread ID.
func (s *server) threads(w http.ResponseWriter, r *http.Request) {
	latest := map[string]checkpointRow{}
	for t, err := range s.saver.List(r.Context(), checkpoint.ListQuery{Limit: threadScan}) {
		if err != nil {
			writeError(w, errStatus(err), fmt.Errorf("list checkpoints: %w", err))
			return
		}
		if _, seen := latest[t.Config.ThreadID]; !seen {
			latest[t.Config.ThreadID] = rowOf(t, nil)
		}
	}
	out := make([]threadRow, 0, len(latest))
	for _, id := range slices.Sorted(maps.Keys(latest)) {
		out = append(out, threadRow{ThreadID: id, Latest: latest[id]})
	}
	writeJSON(w, http.StatusOK, out)
}

// checkpointPage is the body of /api/threads/{id}/checkpoints.
type checkpointPage struct {
	Checkpoints []checkpointRow `json:"checkpoints"`
	// NextBefore, when set, is the ?before= of the next (older) page.
	NextBefore string `json:"next_before,omitempty"`
}

// checkpoints serves GET /api/threads/{thread}/checkpoints?before=&limit=:
// the thread's checkpoints (every namespace), newest first.
func (s *server) checkpoints(w http.ResponseWriter, r *http.Request) {
	limit := defaultPage
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			writeError(w, http.StatusBadRequest, fmt.Errorf("limit must be 1 to %d", maxPage))
			return
		}
		limit = n
	}
	// One more than the page: it tells whether there is a next page, and
	// is often the parent of the page's last checkpoint.
	q := checkpoint.ListQuery{ThreadID: r.PathValue("thread"), Before: r.URL.Query().Get("before"), Limit: limit + 1}
	var tuples []*checkpoint.Tuple
	for t, err := range s.saver.List(r.Context(), q) {
		if err != nil {
			writeError(w, errStatus(err), fmt.Errorf("list checkpoints: %w", err))
			return
		}
		tuples = append(tuples, t)
	}
	byID := make(map[checkpoint.Config]*checkpoint.Tuple, len(tuples))
	for _, t := range tuples {
		byID[t.Config] = t
	}
	page := checkpointPage{Checkpoints: []checkpointRow{}}
	for i, t := range tuples {
		if i == limit {
			page.NextBefore = tuples[i-1].Config.CheckpointID
			break
		}
		var parent *checkpoint.Tuple
		if t.ParentConfig != nil {
			parent = byID[*t.ParentConfig]
		}
		page.Checkpoints = append(page.Checkpoints, rowOf(t, parent))
	}
	writeJSON(w, http.StatusOK, page)
}

// rowOf summarises a checkpoint; parent, when known, tells which channels
// it changed.
func rowOf(t *checkpoint.Tuple, parent *checkpoint.Tuple) checkpointRow {
	row := checkpointRow{
		ThreadID:     t.Config.ThreadID,
		CheckpointNS: t.Config.CheckpointNS,
		CheckpointID: t.Config.CheckpointID,
		TS:           t.Checkpoint.TS,
		Step:         metadataInt(t.Metadata["step"]),
		Writes:       []stream.WriteJSON{},
	}
	row.Source, _ = t.Metadata["source"].(string)
	if t.ParentConfig != nil {
		row.ParentID = t.ParentConfig.CheckpointID
	}
	switch versions := t.Checkpoint.ChannelVersions; {
	case t.Checkpoint.UpdatedChannels != nil:
		row.Channels = slices.Sorted(slices.Values(t.Checkpoint.UpdatedChannels))
	case t.ParentConfig == nil:
		row.Channels = slices.Sorted(maps.Keys(versions))
	case parent != nil:
		row.Channels = []string{}
		for ch, v := range versions {
			if parent.Checkpoint.ChannelVersions[ch] != v {
				row.Channels = append(row.Channels, ch)
			}
		}
		slices.Sort(row.Channels)
	}
	for _, pw := range t.PendingWrites {
		row.Writes = append(row.Writes, stream.WriteJSON{TaskID: pw.TaskID, Channel: pw.Channel})
	}
	return row
}

// metadataInt reads an integral metadata number (int64 or float64 as
// stored metadata comes back).
func metadataInt(v any) *int64 {
	switch x := v.(type) {
	case int64:
		return &x
	case int:
		n := int64(x)
		return &n
	case float64:
		if n := int64(x); float64(n) == x {
			return &n
		}
	}
	return nil
}

// stateJSON is the full state of one checkpoint.
type stateJSON struct {
	ThreadID        string                       `json:"thread_id"`
	CheckpointNS    string                       `json:"checkpoint_ns"`
	CheckpointID    string                       `json:"checkpoint_id"`
	Parent          *configJSON                  `json:"parent"`
	V               int                          `json:"v"`
	TS              string                       `json:"ts"`
	ChannelValues   map[string]any               `json:"channel_values"`
	ChannelVersions map[string]string            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]string `json:"versions_seen"`
	UpdatedChannels []string                     `json:"updated_channels"`
	Metadata        map[string]any               `json:"metadata"`
	PendingWrites   []stream.WriteJSON           `json:"pending_writes"`
}

// configJSON addresses a checkpoint.
type configJSON struct {
	ThreadID     string `json:"thread_id"`
	CheckpointNS string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
}

// checkpointState serves GET /api/threads/{thread}/checkpoints/{id}?ns=.
func (s *server) checkpointState(w http.ResponseWriter, r *http.Request) {
	cfg := checkpoint.Config{ThreadID: r.PathValue("thread"), CheckpointNS: r.URL.Query().Get("ns"), CheckpointID: r.PathValue("id")}
	t, err := s.saver.GetTuple(r.Context(), cfg)
	if err != nil {
		writeError(w, errStatus(err), err)
		return
	}
	cp := t.Checkpoint
	out := stateJSON{
		ThreadID:        t.Config.ThreadID,
		CheckpointNS:    t.Config.CheckpointNS,
		CheckpointID:    t.Config.CheckpointID,
		V:               cp.V,
		TS:              cp.TS,
		ChannelValues:   jsonMap(cp.ChannelValues),
		ChannelVersions: cp.ChannelVersions,
		VersionsSeen:    cp.VersionsSeen,
		UpdatedChannels: cp.UpdatedChannels,
		Metadata:        jsonMap(t.Metadata),
		PendingWrites:   []stream.WriteJSON{},
	}
	if p := t.ParentConfig; p != nil {
		out.Parent = &configJSON{ThreadID: p.ThreadID, CheckpointNS: p.CheckpointNS, CheckpointID: p.CheckpointID}
	}
	for _, pw := range t.PendingWrites { // ordered by (task ID, index)
		out.PendingWrites = append(out.PendingWrites, stream.WriteJSON{TaskID: pw.TaskID, Channel: pw.Channel, Value: jsonValue(pw.Value)})
	}
	writeJSON(w, http.StatusOK, out)
}
