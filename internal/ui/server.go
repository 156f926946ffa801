package ui

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/http"
	"sync"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

//go:embed static
var staticFiles embed.FS

// heartbeatEvery is how often an idle event stream sends a comment, so that
// proxies and browsers keep the connection open.
const heartbeatEvery = 15 * time.Second

// requestTimeout bounds the Redis work of one API request (event streams
// excepted).
const requestTimeout = 20 * time.Second

// Options configure a Server.
type Options struct {
	// Prefix and Shards are the saver's (redissaver.Options); zero values
	// mean the defaults.
	Prefix string
	Shards int
	// AllowWrites enables fork (copy), delete and prune; without it the
	// API answers them 403 and the page hides them.
	AllowWrites bool
	// Encryption is the keyring of a prefix written with encryption at rest
	// (redissaver.Options.Encryption); ReadPlaintext also reads the values
	// written before it was turned on. Without a keyring, an encrypted value
	// is an error (checkpoint.ErrDecrypt, kind "decrypt").
	Encryption    *checkpoint.Keyring
	ReadPlaintext bool
	// Stream tunes the event subscriber (Block, MaxBackoff...); its Prefix,
	// Shards, Encryption and ReadPlaintext are set from the fields above.
	Stream stream.Options
	// Logger receives server errors; nil: the standard logger.
	Logger *log.Logger
}

// Server serves the UI: the page, the JSON API and the live events. It
// connects to the saver's data on first use, and again after a failure,
// so that it starts (and says what is wrong) even when Redis cannot be
// reached or the prefix holds no data yet.
type Server struct {
	rdb       redis.UniversalClient
	opts      Options
	layout    keys.Layout
	heartbeat time.Duration
	mux       *http.ServeMux

	mu    sync.Mutex
	saver *redissaver.Saver
	sub   *stream.Subscriber
}

// New returns the UI's handler over rdb, which it does not own. It
// validates the options and does not touch Redis.
func New(rdb redis.UniversalClient, opts Options) (*Server, error) {
	if rdb == nil {
		return nil, fmt.Errorf("ui: nil Redis client")
	}
	if opts.Prefix == "" {
		opts.Prefix = redissaver.DefaultPrefix
	}
	if opts.Shards == 0 {
		opts.Shards = keys.DefaultShards
	}
	layout, err := keys.New(opts.Prefix, opts.Shards)
	if err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = log.Default()
	}
	if opts.ReadPlaintext && opts.Encryption == nil {
		return nil, errors.New("ui: ReadPlaintext needs Encryption (the keyring)")
	}
	opts.Stream.Prefix, opts.Stream.Shards = opts.Prefix, opts.Shards
	opts.Stream.Encryption, opts.Stream.ReadPlaintext = opts.Encryption, opts.ReadPlaintext
	s := &Server{rdb: rdb, opts: opts, layout: layout, heartbeat: heartbeatEvery, mux: http.NewServeMux()}
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /", noCache(http.FileServerFS(static)))
	s.mux.HandleFunc("GET /api/status", s.status)
	s.mux.HandleFunc("GET /api/threads", s.threads)
	s.mux.HandleFunc("GET /api/threads/{thread}", s.thread)
	s.mux.HandleFunc("GET /api/threads/{thread}/checkpoints", s.checkpoints)
	s.mux.HandleFunc("GET /api/threads/{thread}/checkpoints/{id}", s.checkpointState)
	s.mux.HandleFunc("GET /api/threads/{thread}/diff", s.diff)
	s.mux.HandleFunc("GET /api/threads/{thread}/branches", s.branches)
	s.mux.HandleFunc("GET /api/inbox", s.inbox)
	s.mux.HandleFunc("GET /api/events", s.events)
	s.mux.HandleFunc("POST /api/threads/{thread}/copy", s.guard(s.copyThread))
	s.mux.HandleFunc("POST /api/threads/{thread}/prune", s.guard(s.pruneThread))
	s.mux.HandleFunc("DELETE /api/threads/{thread}", s.guard(s.deleteThread))
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// noCache makes browsers revalidate the page's assets, so that a new
// version is picked up on reload.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// bounded returns the request's context with the API's time limit.
func bounded(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), requestTimeout)
}

// writeJSON encodes v before writing anything, so that an encoding error
// still gives a clean 500.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.opts.Logger.Printf("redcheck ui: encode response: %v", err)
		http.Error(w, "cannot encode the response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
