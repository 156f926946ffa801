package main

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log"
	"net/http"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
)

//go:embed static
var staticFiles embed.FS

// heartbeatEvery is how often an idle event stream sends a comment, so that
// proxies and browsers keep the connection open.
const heartbeatEvery = 15 * time.Second

// server serves the dashboard: the page, the JSON API over the saver and
// the live events of the subscriber.
type server struct {
	saver     *redissaver.Saver
	sub       *stream.Subscriber
	heartbeat time.Duration
	mux       *http.ServeMux
}

// newServer returns the dashboard's handler. saver and sub must share one
// prefix and number of shards.
func newServer(saver *redissaver.Saver, sub *stream.Subscriber) *server {
	s := &server{saver: saver, sub: sub, heartbeat: heartbeatEvery, mux: http.NewServeMux()}
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	s.mux.Handle("GET /", noCache(http.FileServerFS(static)))
	s.mux.HandleFunc("GET /api/threads", s.threads)
	s.mux.HandleFunc("GET /api/threads/{thread}/checkpoints", s.checkpoints)
	s.mux.HandleFunc("GET /api/threads/{thread}/checkpoints/{id}", s.checkpointState)
	s.mux.HandleFunc("GET /api/events", s.events)
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// noCache makes browsers revalidate the page's assets, so that a rebuilt
// dashboard is picked up on reload.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// writeJSON encodes v before writing anything, so that an encoding error
// still gives a clean 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		log.Printf("dashboard: encode response: %v", err)
		http.Error(w, "cannot encode the response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// apiError is the body of every error response of the JSON API.
type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	if status >= 500 {
		log.Printf("dashboard: %v", err)
	}
	writeJSON(w, status, apiError{Error: err.Error()})
}

// errStatus maps a saver error to an HTTP status.
func errStatus(err error) int {
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, checkpoint.ErrInvalidConfig):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
