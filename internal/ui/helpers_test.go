package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// fixture is a UI on a fresh miniredis, served on loopback.
type fixture struct {
	saver  *redissaver.Saver
	rdb    redis.UniversalClient
	prefix string
	srv    *Server
	ts     *httptest.Server
}

// newFixture serves a UI over a new prefix of a fresh miniredis, read-only.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	_, rdb := redistest.Mini(t)
	return serveUI(t, rdb, redistest.Prefix(t), false)
}

// serveUI serves a UI over prefix (4 shards) of rdb, created here.
func serveUI(t *testing.T, rdb redis.UniversalClient, prefix string, allowWrites bool) *fixture {
	t.Helper()
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: prefix, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(rdb, Options{Prefix: prefix, Shards: 4, AllowWrites: allowWrites, Logger: log.New(io.Discard, "", 0),
		Stream: stream.Options{Block: 100 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{saver: saver, rdb: rdb, prefix: prefix, srv: srv}
	f.ts = httptest.NewServer(f.srv)
	t.Cleanup(func() {
		f.ts.CloseClientConnections() // ends open event streams
		f.ts.Close()
	})
	return f
}

// put stores a checkpoint of step on top of cfg with the given channel
// values (each gets a new version) and returns the new checkpoint's config.
func (f *fixture) put(t *testing.T, cfg checkpoint.Config, step int, values map[string]any) checkpoint.Config {
	t.Helper()
	source := "loop"
	if cfg.CheckpointID == "" {
		source = "input"
	}
	return f.putMD(t, cfg, checkpoint.Metadata{"source": source, "step": step}, values)
}

// putMD is put with the given metadata.
func (f *fixture) putMD(t *testing.T, cfg checkpoint.Config, md checkpoint.Metadata, values map[string]any) checkpoint.Config {
	t.Helper()
	versions := map[string]string{}
	if cfg.CheckpointID != "" {
		parent, err := f.saver.GetTuple(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		versions = parent.Checkpoint.ChannelVersions
	}
	newVersions := map[string]string{}
	for ch := range values {
		versions[ch] = f.saver.NextVersion(versions[ch])
		newVersions[ch] = versions[ch]
	}
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now().UTC().Format(time.RFC3339Nano), ChannelValues: values, ChannelVersions: versions}
	next, err := f.saver.Put(context.Background(), cfg, cp, md, newVersions)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// getJSON fetches path and decodes its JSON body into out; it returns the
// status.
func (f *fixture) getJSON(t *testing.T, path string, out any) int {
	t.Helper()
	resp, err := http.Get(f.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: decode: %v", path, err)
	}
	return resp.StatusCode
}

// sseMessage is one Server-Sent Event.
type sseMessage struct {
	id, event, data string
}

// sseStream reads an event stream in the background.
type sseStream struct {
	msgs     chan sseMessage
	comments chan string
	close    func()
}

// openEvents connects to path (an /api/events URL), with a Last-Event-ID
// header when lastID is set.
func (f *fixture) openEvents(t *testing.T, path, lastID string) (*sseStream, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &sseStream{msgs: make(chan sseMessage, 100), comments: make(chan string, 100), close: func() {
		cancel()
		_ = resp.Body.Close()
	}}
	t.Cleanup(s.close)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var m sseMessage
		for sc.Scan() {
			line := sc.Text()
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "":
				if line == "" && (m.data != "" || m.event != "") {
					s.msgs <- m
					m = sseMessage{}
				} else if line != "" {
					select {
					case s.comments <- value:
					default:
					}
				}
			case "id":
				m.id = value
			case "event":
				m.event = value
			case "data":
				m.data += value
			}
		}
		close(s.msgs)
	}()
	return s, resp
}

// next returns the next message, failing after a few seconds.
func (s *sseStream) next(t *testing.T) sseMessage {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			t.Fatal("event stream ended")
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return sseMessage{}
}

// nextEvent returns the next message, which must be a redcheck event.
func (s *sseStream) nextEvent(t *testing.T) (sseMessage, stream.EventJSON) {
	t.Helper()
	m := s.next(t)
	var ev stream.EventJSON
	if m.event != "" {
		t.Fatalf("got a %q message (%s), want an event", m.event, m.data)
	}
	if err := json.Unmarshal([]byte(m.data), &ev); err != nil {
		t.Fatalf("event data %q: %v", m.data, err)
	}
	if m.id != ev.Cursor || m.id == "" {
		t.Fatalf("message id %q, event cursor %q: want them equal", m.id, ev.Cursor)
	}
	return m, ev
}

// ready reads the stream's first message, which must be "ready", and
// returns its id.
func (s *sseStream) ready(t *testing.T) string {
	t.Helper()
	m := s.next(t)
	if m.event != "ready" || m.id == "" {
		t.Fatalf("first message %+v, want a ready event with an id", m)
	}
	return m.id
}

func describe(ev stream.EventJSON) string {
	return fmt.Sprintf("%s %s/%s", ev.Type, ev.ThreadID, ev.CheckpointID)
}

// interrupt stores a pending interrupt with question on cfg.
func (f *fixture) interrupt(t *testing.T, cfg checkpoint.Config, task, question string) {
	t.Helper()
	w := checkpoint.Write{Channel: checkpoint.InterruptChannel, Value: map[string]any{"value": question, "id": "i-" + task}}
	if err := f.saver.PutWrites(context.Background(), cfg, []checkpoint.Write{w}, task, ""); err != nil {
		t.Fatal(err)
	}
}
