package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
)

// open returns the saver and subscriber of the prefix, connecting first if
// need be. It writes nothing: a prefix without its meta key is errNoData
// (redissaver.New would create it), and New refuses a prefix of another
// shard count or format (redissaver.ErrInvalidOptions). A failure is not
// kept: the next call tries again.
func (s *Server) open(ctx context.Context) (*redissaver.Saver, *stream.Subscriber, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saver != nil {
		return s.saver, s.sub, nil
	}
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errUnreachable, err)
	}
	n, err := s.rdb.Exists(ctx, s.layout.Meta()).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errUnreachable, err)
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("%w: prefix %q has no meta key %s (a wrong --prefix, or nothing written yet)",
			errNoData, s.opts.Prefix, s.layout.Meta())
	}
	// Eviction is accepted: the UI shows whatever is there, and reports a
	// loss as the saver's reads do (checkpoint.ErrDataLoss).
	saver, err := redissaver.New(ctx, s.rdb, redissaver.Options{AcceptEviction: true, Prefix: s.opts.Prefix, Shards: s.opts.Shards,
		Encryption: s.opts.Encryption, ReadPlaintext: s.opts.ReadPlaintext})
	if err != nil {
		if errors.Is(err, checkpoint.ErrDataLoss) {
			return nil, nil, err
		}
		// Another shard count or storage format, most likely.
		return nil, nil, fmt.Errorf("%w: %w", errConfig, err)
	}
	sub, err := stream.New(s.rdb, s.opts.Stream)
	if err != nil {
		return nil, nil, err
	}
	s.saver, s.sub = saver, sub
	return saver, sub, nil
}

// statusJSON is the body of /api/status.
type statusJSON struct {
	OK          bool   `json:"ok"`
	Kind        string `json:"kind,omitempty"`
	Error       string `json:"error,omitempty"`
	Prefix      string `json:"prefix"`
	Shards      int    `json:"shards"`
	AllowWrites bool   `json:"allow_writes"`
}

// status serves GET /api/status: always 200, what is wrong in the body.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := bounded(r)
	defer cancel()
	out := statusJSON{OK: true, Prefix: s.opts.Prefix, Shards: s.opts.Shards, AllowWrites: s.opts.AllowWrites}
	saver, _, err := s.open(ctx)
	if err == nil {
		// A read of the newest checkpoint finds a lost prefix or index.
		for _, lerr := range saver.List(ctx, listLatest(1)) {
			err = lerr
			break
		}
	}
	if err != nil {
		out.OK = false
		_, out.Kind = classify(err)
		out.Error = err.Error()
	}
	s.writeJSON(w, http.StatusOK, out)
}
