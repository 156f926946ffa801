package ui

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/stream"
)

// Limits of the JSON API.
const (
	// defaultPage and maxPage bound a page of threads or checkpoints.
	defaultPage = 50
	maxPage     = 500
	// threadScan is how many checkpoints one page of /api/threads reads at
	// most to find its threads: past it the page ends early, with a cursor
	// to go on from (a thread with many recent checkpoints is skipped over
	// in bounded steps).
	threadScan = 5000
)

// checkpointRow is one line of a thread's timeline.
type checkpointRow struct {
	ThreadID     string `json:"thread_id"`
	CheckpointNS string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
	ParentID     string `json:"parent_id,omitempty"`
	Step         *int64 `json:"step"`
	Source       string `json:"source,omitempty"`
	RunID        string `json:"run_id,omitempty"`
	TS           string `json:"ts,omitempty"`
	// Time is the checkpoint's time (its ID's, else its ts), RFC 3339.
	Time string `json:"time,omitempty"`
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

// threadPage is the body of /api/threads.
type threadPage struct {
	Threads []threadRow `json:"threads"`
	// NextBefore, when set, is the ?before= of the next page.
	NextBefore string `json:"next_before,omitempty"`
}

// listLatest is the query of the newest checkpoints of the root graphs of
// every thread.
func listLatest(limit int) checkpoint.ListQuery {
	return checkpoint.ListQuery{CheckpointNS: checkpoint.NS(""), Limit: limit}
}

// pageLimit reads ?limit= (1 to maxPage, default defaultPage).
func pageLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return defaultPage, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPage {
		return 0, fmt.Errorf("limit must be 1 to %d", maxPage)
	}
	return n, nil
}

// metadataFilter reads ?run_id=R and ?filter=k=v (repeatable) into a
// metadata filter; a value that parses as JSON is that JSON value (step=3
// is the number 3), any other a string, as "redcheck threads --filter".
func metadataFilter(r *http.Request) (checkpoint.Metadata, error) {
	q := r.URL.Query()
	f := checkpoint.Metadata{}
	for _, kv := range q["filter"] {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("filter %q: want key=value", kv)
		}
		var val any
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			val = v
		}
		f[k] = val
	}
	if run := q.Get("run_id"); run != "" {
		f["run_id"] = run
	}
	if len(f) == 0 {
		return nil, nil
	}
	return f, nil
}

// threads serves GET /api/threads: the threads newest first (by their
// latest checkpoint of the root graph that matches the filter), a page at
// a time. The listing merges the shards' indexes newest first: the first
// checkpoint of a thread met is its latest, and later ones are skipped.
// On a page after the first (?before=), a thread met is listed only if
// that checkpoint is its latest matching one: one more read per thread
// of the page, so that a thread is never listed twice.
func (s *Server) threads(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	limit, err := pageLimit(r)
	if err != nil {
		s.badRequest(w, "%v", err)
		return
	}
	filter, err := metadataFilter(r)
	if err != nil {
		s.badRequest(w, "%v", err)
		return
	}
	before := r.URL.Query().Get("before")
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	q := checkpoint.ListQuery{CheckpointNS: checkpoint.NS(""), Before: before, Filter: filter}
	page := threadPage{Threads: []threadRow{}}
	seen := map[string]bool{}
	scanned, last := 0, ""
	for t, err := range saver.List(ctx, q) {
		if err != nil {
			s.writeError(w, fmt.Errorf("list checkpoints: %w", err))
			return
		}
		scanned++
		last = t.Config.CheckpointID
		th := t.Config.ThreadID
		if !seen[th] {
			seen[th] = true
			first := true
			if before != "" {
				lq := checkpoint.ListQuery{ThreadID: th, CheckpointNS: checkpoint.NS(""), Filter: filter, Limit: 1}
				for lt, err := range saver.List(ctx, lq) {
					if err != nil {
						s.writeError(w, fmt.Errorf("list thread %q: %w", th, err))
						return
					}
					first = lt.Config.CheckpointID == t.Config.CheckpointID
				}
			}
			if first {
				page.Threads = append(page.Threads, threadRow{ThreadID: th, Latest: rowOf(t, nil)})
			}
		}
		if len(page.Threads) == limit || scanned == threadScan {
			page.NextBefore = last
			break
		}
	}
	s.writeJSON(w, http.StatusOK, page)
}

// thread serves GET /api/threads/{thread}: the thread's latest checkpoint
// of the root graph (404 when it has none).
func (s *Server) thread(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	th := r.PathValue("thread")
	if err := keys.ValidateThreadID(th); err != nil || th == "" {
		s.badRequest(w, "bad thread ID %q", th)
		return
	}
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	t, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: th})
	if err != nil {
		s.writeError(w, fmt.Errorf("thread %q: %w", th, err))
		return
	}
	s.writeJSON(w, http.StatusOK, threadRow{ThreadID: th, Latest: rowOf(t, nil)})
}

// checkpointPage is the body of /api/threads/{id}/checkpoints.
type checkpointPage struct {
	Checkpoints []checkpointRow `json:"checkpoints"`
	// NextBefore, when set, is the ?before= of the next (older) page.
	NextBefore string `json:"next_before,omitempty"`
}

// checkpoints serves GET /api/threads/{thread}/checkpoints?before=&limit=:
// the thread's checkpoints (every namespace), newest first.
func (s *Server) checkpoints(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	limit, err := pageLimit(r)
	if err != nil {
		s.badRequest(w, "%v", err)
		return
	}
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	// One more than the page: it tells whether there is a next page, and
	// is often the parent of the page's last checkpoint.
	q := checkpoint.ListQuery{ThreadID: r.PathValue("thread"), Before: r.URL.Query().Get("before"), Limit: limit + 1}
	var tuples []*checkpoint.Tuple
	for t, err := range saver.List(ctx, q) {
		if err != nil {
			s.writeError(w, fmt.Errorf("list checkpoints: %w", err))
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
	s.writeJSON(w, http.StatusOK, page)
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
	row.RunID, _ = t.Metadata["run_id"].(string)
	if at, ok := inspect.CheckpointTime(t.Checkpoint); ok {
		row.Time = at.Format("2006-01-02T15:04:05.000Z07:00")
	}
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
	Time            string                       `json:"time,omitempty"`
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
func (s *Server) checkpointState(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	cfg := checkpoint.Config{ThreadID: r.PathValue("thread"), CheckpointNS: r.URL.Query().Get("ns"), CheckpointID: r.PathValue("id")}
	t, err := saver.GetTuple(ctx, cfg)
	if err != nil {
		s.writeError(w, err)
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
	if at, ok := inspect.CheckpointTime(cp); ok {
		out.Time = at.Format("2006-01-02T15:04:05.000Z07:00")
	}
	if p := t.ParentConfig; p != nil {
		out.Parent = &configJSON{ThreadID: p.ThreadID, CheckpointNS: p.CheckpointNS, CheckpointID: p.CheckpointID}
	}
	for _, pw := range t.PendingWrites { // ordered by (task ID, index)
		out.PendingWrites = append(out.PendingWrites, stream.WriteJSON{TaskID: pw.TaskID, Channel: pw.Channel, Value: jsonValue(pw.Value)})
	}
	s.writeJSON(w, http.StatusOK, out)
}
