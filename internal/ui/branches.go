package ui

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// branchScan is how many of the newest events of a stream /branches reads.
const branchScan = 500

// copyJSON is one copy of a thread (CopyThread, "redcheck copy").
type copyJSON struct {
	ThreadID string `json:"thread_id"`
	Time     string `json:"time"`
}

// branchesJSON is the body of /api/threads/{thread}/branches.
type branchesJSON struct {
	ThreadID string `json:"thread_id"`
	// CopiedFrom are the threads this one was copied from, newest first,
	// from its own event stream.
	CopiedFrom []copyJSON `json:"copied_from"`
	// Copies are the threads copied from this one, newest first, from the
	// recent events of every shard's feed.
	Copies []copyJSON `json:"copies"`
	// Scanned is how many events of each stream were read: older copies
	// are not listed.
	Scanned int `json:"scanned"`
}

// branches serves GET /api/threads/{thread}/branches: which threads the
// thread was copied from or to, as the thread_copied events still held
// tell (bounded: the branchScan newest of its stream and of each shard's
// feed). The branches within the thread (checkpoints forked from an older
// one) are the parent links of its checkpoints, which the page draws.
func (s *Server) branches(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	th := r.PathValue("thread")
	if err := keys.ValidateThreadID(th); err != nil || th == "" {
		s.badRequest(w, "bad thread ID %q", th)
		return
	}
	if _, _, err := s.open(ctx); err != nil {
		s.writeError(w, err)
		return
	}
	out := branchesJSON{ThreadID: th, CopiedFrom: []copyJSON{}, Copies: []copyJSON{}, Scanned: branchScan}
	own, err := s.copyEvents(ctx, s.layout.Events(th))
	if err != nil {
		s.writeError(w, err)
		return
	}
	for _, ev := range own {
		if ev.ThreadID == th && ev.SourceThreadID != "" {
			out.CopiedFrom = append(out.CopiedFrom, copyJSON{ThreadID: ev.SourceThreadID, Time: ev.Time.UTC().Format(time.RFC3339)})
		}
	}
	for n := range s.layout.Shards() {
		evs, err := s.copyEvents(ctx, s.layout.Feed(n))
		if err != nil {
			s.writeError(w, err)
			return
		}
		for _, ev := range evs {
			if ev.SourceThreadID == th {
				out.Copies = append(out.Copies, copyJSON{ThreadID: ev.ThreadID, Time: ev.Time.UTC().Format(time.RFC3339)})
			}
		}
	}
	s.writeJSON(w, http.StatusOK, out)
}

// copyEvents returns the thread_copied events among the branchScan newest
// entries of a stream, newest first; a missing stream has none.
func (s *Server) copyEvents(ctx context.Context, key string) ([]stream.Event, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, key, "+", "-", branchScan).Result()
	if err != nil && err != redis.Nil {
		return nil, fmt.Errorf("read events %s: %w", key, err)
	}
	var out []stream.Event
	for _, m := range msgs {
		if t, _ := m.Values["t"].(string); t != string(stream.TypeThreadCopied) {
			continue
		}
		ev, err := stream.DecodeEvent(m, nil)
		if err != nil {
			continue // a malformed entry names no copy
		}
		out = append(out, ev)
	}
	return out, nil
}
