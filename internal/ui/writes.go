package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
	"github.com/graphstate/redcheck/internal/keys"
)

// confirmHeader must be on every write request: a page of another site
// cannot send it without the server's consent (CORS), so a write is always
// the UI's own, after its confirmation dialog.
const confirmHeader = "X-Redcheck-Confirm"

// errWritesOff is the answer to a write without Options.AllowWrites.
var errWritesOff = errors.New("writes are disabled: start redcheck ui with --allow-writes to fork, delete and prune")

// guard lets a write handler run only with Options.AllowWrites and the
// confirmation header, on a valid thread ID.
func (s *Server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.opts.AllowWrites {
			s.writeErrorAs(w, http.StatusForbidden, kindForbidden, errWritesOff)
			return
		}
		if r.Header.Get(confirmHeader) != "yes" {
			s.writeErrorAs(w, http.StatusForbidden, kindForbidden, fmt.Errorf("a write needs the header %s: yes (the UI sends it once confirmed)", confirmHeader))
			return
		}
		if th := r.PathValue("thread"); th == "" || keys.ValidateThreadID(th) != nil {
			s.badRequest(w, "bad thread ID %q", th)
			return
		}
		h(w, r)
	}
}

// copyRequest is the body of POST /api/threads/{thread}/copy.
type copyRequest struct {
	Target string `json:"target"`
	At     string `json:"at"`
}

// copyResult is its answer.
type copyResult struct {
	Source       string `json:"source_thread_id"`
	Target       string `json:"target_thread_id"`
	At           string `json:"at,omitempty"`
	CheckpointID string `json:"latest_checkpoint_id"`
}

// copyThread serves POST /api/threads/{thread}/copy: inspect.Fork, as
// "redcheck copy THREAD TARGET [--at ID]". 409 when the target has
// checkpoints.
func (s *Server) copyThread(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	var req copyRequest
	d := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		s.badRequest(w, "body: %v", err)
		return
	}
	src := r.PathValue("thread")
	if req.Target == "" || keys.ValidateThreadID(req.Target) != nil || req.Target == src {
		s.badRequest(w, "bad target thread ID %q", req.Target)
		return
	}
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	for range saver.List(ctx, checkpoint.ListQuery{ThreadID: req.Target, Limit: 1}) {
		s.writeErrorAs(w, http.StatusConflict, kindBadRequest, fmt.Errorf("thread %q has checkpoints: copy to a new thread", req.Target))
		return
	}
	latest, err := inspect.Fork(ctx, saver, src, req.Target, req.At)
	if err != nil {
		s.writeError(w, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, copyResult{Source: src, Target: req.Target, At: req.At, CheckpointID: latest.CheckpointID})
}

// pruneThread serves POST /api/threads/{thread}/prune: Prune with
// checkpoint.PruneKeepLatest, as "redcheck prune THREAD".
func (s *Server) pruneThread(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	th := r.PathValue("thread")
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	if _, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: th}); err != nil {
		s.writeError(w, fmt.Errorf("thread %q: %w", th, err))
		return
	}
	if err := saver.Prune(ctx, []string{th}, checkpoint.PruneKeepLatest); err != nil {
		s.writeError(w, err)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"pruned": th})
}

// deleteThread serves DELETE /api/threads/{thread}: DeleteThread, as
// "redcheck delete THREAD".
func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	th := r.PathValue("thread")
	saver, _, err := s.open(ctx)
	if err != nil {
		s.writeError(w, err)
		return
	}
	if err := saver.DeleteThread(ctx, th); err != nil {
		s.writeError(w, err)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"deleted": th})
}
