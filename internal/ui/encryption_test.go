package ui

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
)

// TestEncryptedPrefix: over a prefix written with encryption at rest, the UI
// shows a checkpoint's values with the writer's keyring, and without it (or
// with another key) answers kind "decrypt", never a value.
func TestEncryptedPrefix(t *testing.T) {
	key := func(b byte) []byte { k := make([]byte, checkpoint.KeySize); k[0] = b; return k }
	ring, err := checkpoint.NewKeyring("k1", map[string][]byte{"k1": key(1)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := checkpoint.NewKeyring("k2", map[string][]byte{"k2": key(2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(nil, Options{ReadPlaintext: true}); err == nil {
		t.Error("ReadPlaintext without a keyring: no error")
	}
	_, rdb := redistest.Mini(t)
	prefix := redistest.Prefix(t)
	ctx := context.Background()
	saver, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4, Encryption: ring})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "the-secret-value"
	cp := checkpoint.Empty()
	cp.ChannelValues = map[string]any{"note": secret}
	cp.ChannelVersions = map[string]string{"note": checkpoint.NextVersion("")}
	cfg, err := saver.Put(ctx, checkpoint.Config{ThreadID: "enc"}, cp, checkpoint.Metadata{"source": "input", "step": -1}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/threads/enc/checkpoints/" + cfg.CheckpointID + "?ns="

	for _, tc := range []struct {
		name     string
		ring     *checkpoint.Keyring
		wantCode int
		wantKind string
	}{
		{"the writer's keyring", ring, http.StatusOK, ""},
		{"no keyring", nil, http.StatusInternalServerError, kindDecrypt},
		{"another key", other, http.StatusInternalServerError, kindDecrypt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(rdb, Options{Prefix: prefix, Shards: 4, Encryption: tc.ring, Logger: log.New(io.Discard, "", 0)})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			f := &fixture{rdb: rdb, prefix: prefix, srv: srv, ts: ts}
			var body map[string]any
			code := f.getJSON(t, path, &body)
			if code != tc.wantCode {
				t.Fatalf("status %d, want %d: %v", code, tc.wantCode, body)
			}
			if tc.wantKind == "" {
				vals, _ := body["channel_values"].(map[string]any)
				if vals["note"] != secret {
					t.Errorf("channel values %v", vals)
				}
				return
			}
			if body["kind"] != tc.wantKind {
				t.Errorf("kind %v, want %q", body["kind"], tc.wantKind)
			}
			if msg, _ := body["error"].(string); strings.Contains(msg, secret) {
				t.Errorf("the error holds the value: %q", msg)
			}
		})
	}
}
