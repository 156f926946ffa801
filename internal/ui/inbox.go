package ui

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
)

// Bounds of /api/inbox.
const (
	defaultInboxScan = 200
	maxInboxScan     = 2000
)

// interruptJSON is one pending interrupt: a write to
// checkpoint.InterruptChannel.
type interruptJSON struct {
	TaskID string `json:"task_id"`
	Value  any    `json:"value"`
}

// inboxItem is a thread waiting on interrupt().
type inboxItem struct {
	ThreadID     string `json:"thread_id"`
	CheckpointID string `json:"checkpoint_id"`
	Step         *int64 `json:"step"`
	RunID        string `json:"run_id,omitempty"`
	// Since is when it stopped: the time of the checkpoint the interrupt
	// was written on.
	Since      string          `json:"since,omitempty"`
	Interrupts []interruptJSON `json:"interrupts"`
}

// inboxJSON is the body of /api/inbox.
type inboxJSON struct {
	Items []inboxItem `json:"items"`
	// Scanned is how many threads were looked at, newest first; Complete
	// is true when that was every thread.
	Scanned  int  `json:"scanned"`
	Complete bool `json:"complete"`
}

// inbox serves GET /api/inbox?scan=N: among the N most recently active
// threads (by their latest checkpoint of the root graph), those whose
// latest checkpoint holds pending interrupts, newest first. Bounded: a
// thread waiting longer than N others were active is not found here (its
// ID finds it).
func (s *Server) inbox(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	scan := defaultInboxScan
	if v := r.URL.Query().Get("scan"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxInboxScan {
			s.badRequest(w, "scan must be 1 to %d", maxInboxScan)
			return
		}
		scan = n
	}
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	out := inboxJSON{Items: []inboxItem{}, Complete: true}
	seen := map[string]bool{}
	read := 0
	for t, err := range saver.List(ctx, listLatest(0)) {
		if err != nil {
			s.writeError(w, fmt.Errorf("list checkpoints: %w", err))
			return
		}
		if read++; read > threadScan*4 {
			out.Complete = false
			break
		}
		th := t.Config.ThreadID
		if seen[th] {
			continue
		}
		if len(seen) == scan {
			out.Complete = false
			break
		}
		seen[th] = true
		item := inboxItem{ThreadID: th, CheckpointID: t.Config.CheckpointID, Step: metadataInt(t.Metadata["step"]), Interrupts: []interruptJSON{}}
		item.RunID, _ = t.Metadata["run_id"].(string)
		for _, pw := range t.PendingWrites {
			if pw.Channel == checkpoint.InterruptChannel {
				item.Interrupts = append(item.Interrupts, interruptJSON{TaskID: pw.TaskID, Value: inspect.Plain(pw.Value)})
			}
		}
		if len(item.Interrupts) == 0 {
			continue
		}
		if at, ok := inspect.CheckpointTime(t.Checkpoint); ok {
			item.Since = at.Format("2006-01-02T15:04:05.000Z07:00")
		}
		out.Items = append(out.Items, item)
	}
	out.Scanned = len(seen)
	s.writeJSON(w, http.StatusOK, out)
}
