package ui

import (
	"fmt"
	"net/http"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
)

// diffJSON is the body of /api/threads/{thread}/diff: what changed from
// checkpoint B to checkpoint A, as "redcheck diff" prints it
// (internal/inspect).
type diffJSON struct {
	A *checkpointRow `json:"a"`
	// B is null when A is a root checkpoint compared with nothing.
	B         *checkpointRow          `json:"b"`
	Changes   []inspect.ChannelChange `json:"changes"`
	Unchanged int                     `json:"unchanged"`
	// Patch is the RFC 6902 JSON Patch that turns B's channel values
	// into A's ("redcheck diff --json").
	Patch []inspect.PatchOp `json:"patch"`
}

// diff serves GET /api/threads/{thread}/diff?a=ID[&b=ID][&ns=NS].
func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	q := r.URL.Query()
	th, ns, aID := r.PathValue("thread"), q.Get("ns"), q.Get("a")
	if aID == "" {
		s.badRequest(w, "diff needs ?a=CHECKPOINT_ID")
		return
	}
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	a, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: aID})
	if err != nil {
		s.writeError(w, fmt.Errorf("checkpoint A: %w", err))
		return
	}
	bID := q.Get("b")
	if bID == "" && a.ParentConfig != nil {
		bID = a.ParentConfig.CheckpointID
	}
	var b *checkpoint.Tuple
	if bID != "" {
		if b, err = saver.GetTuple(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: bID}); err != nil {
			s.writeError(w, fmt.Errorf("checkpoint B: %w", err))
			return
		}
	}
	from, to := map[string]any{}, map[string]any{}
	if b != nil && b.Checkpoint.ChannelValues != nil {
		from = inspect.Plain(b.Checkpoint.ChannelValues).(map[string]any)
	}
	if a.Checkpoint.ChannelValues != nil {
		to = inspect.Plain(a.Checkpoint.ChannelValues).(map[string]any)
	}
	ar := rowOf(a, b)
	out := diffJSON{A: &ar, Patch: inspect.Patch(from, to)}
	if b != nil {
		br := rowOf(b, nil)
		out.B = &br
	}
	out.Changes, out.Unchanged = inspect.Diff(from, to)
	s.writeJSON(w, http.StatusOK, out)
}
