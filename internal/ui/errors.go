package ui

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// Error kinds of the API's error bodies (the package doc lists them).
const (
	kindUnreachable = "unreachable"
	kindNoData      = "no_data"
	kindConfig      = "config"
	kindDataLoss    = "data_loss"
	kindDecrypt     = "decrypt"
	kindNotFound    = "not_found"
	kindBadRequest  = "bad_request"
	kindForbidden   = "forbidden"
	kindError       = "error"
)

// errUnreachable wraps a failure to reach Redis; errNoData a prefix
// without a meta key.
var (
	errUnreachable = errors.New("ui: cannot reach Redis")
	errNoData      = errors.New("ui: the prefix holds no redcheck data")
	errConfig      = errors.New("ui: the prefix does not match the options")
)

// apiError is the body of every error response of the JSON API.
type apiError struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// classify returns the HTTP status and kind of an error.
func classify(err error) (int, string) {
	switch {
	case errors.Is(err, errUnreachable):
		return http.StatusServiceUnavailable, kindUnreachable
	case errors.Is(err, errNoData):
		return http.StatusServiceUnavailable, kindNoData
	case errors.Is(err, errConfig), errors.Is(err, redissaver.ErrInvalidOptions):
		return http.StatusServiceUnavailable, kindConfig
	case errors.Is(err, checkpoint.ErrDataLoss):
		return http.StatusInternalServerError, kindDataLoss
	case errors.Is(err, checkpoint.ErrDecrypt):
		// Checked before ErrInvalid*: a value that fails to open is no bad request.
		return http.StatusInternalServerError, kindDecrypt
	case errors.Is(err, checkpoint.ErrNotFound):
		return http.StatusNotFound, kindNotFound
	case errors.Is(err, checkpoint.ErrInvalidConfig), errors.Is(err, checkpoint.ErrInvalidCheckpoint):
		return http.StatusBadRequest, kindBadRequest
	}
	return http.StatusInternalServerError, kindError
}

// writeError answers err with its status and kind.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	status, kind := classify(err)
	s.writeErrorAs(w, status, kind, err)
}

func (s *Server) writeErrorAs(w http.ResponseWriter, status int, kind string, err error) {
	if status >= 500 && kind != kindUnreachable && kind != kindNoData && kind != kindConfig {
		s.opts.Logger.Printf("redcheck ui: %v", err)
	}
	s.writeJSON(w, status, apiError{Error: err.Error(), Kind: kind})
}

// badRequest answers a malformed request.
func (s *Server) badRequest(w http.ResponseWriter, format string, args ...any) {
	s.writeErrorAs(w, http.StatusBadRequest, kindBadRequest, fmt.Errorf(format, args...))
}
