package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/stream"
)

// Event stream (GET /api/events[?thread=T][&from=beginning]).
//
// Every event is an SSE message whose data is eventJSON and whose id is the
// event's Cursor, so a browser that reconnects sends it back as
// Last-Event-ID and resumes right after the last event it received. The
// stream opens with a "ready" event: from then on no event is missed (so a
// page loads its data after "ready" and merges what arrives). For a stream
// starting now, its id is the cursor of the end of the events
// (stream.Subscriber.Position), where a reconnection before any event
// resumes. Subscription errors are sent as
// "stream-error" events (not "error": EventSource fires that name for
// connection failures) and the stream goes on. A gap (events Redis no longer
// holds) is a message like an event, of type "gap" (stream.EventJSON with its
// "gap" field), whose id resumes after it: the page marks it in the
// timeline and reloads what it shows.

// eventOf is an event as the page reads it: its JSON form, with values
// made safe for encoding/json.
func eventOf(ev stream.Event) stream.EventJSON { return ev.JSON(jsonValue) }

// item is what the subscription goroutine hands to the handler.
type item struct {
	ev  stream.Event
	err error
}

// events serves GET /api/events as Server-Sent Events.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := stream.Query{ThreadID: r.URL.Query().Get("thread")}
	if q.ThreadID != "" {
		if err := keys.ValidateThreadID(q.ThreadID); err != nil {
			s.badRequest(w, "%v", err)
			return
		}
	}
	octx, cancel := bounded(r)
	_, sub, err := s.open(octx)
	cancel()
	if err != nil {
		s.writeError(w, err)
		return
	}
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("from")
	}
	readyID, err := s.position(sub, &q, from)
	if err != nil {
		s.badRequest(w, "%v", err)
		return
	}
	if readyID == "" { // start now: after the last event each stream holds
		cursor, err := sub.Position(ctx, q.ThreadID)
		if err != nil {
			s.writeErrorAs(w, http.StatusBadGateway, kindUnreachable, fmt.Errorf("find the end of the events: %w", err))
			return
		}
		q.From, readyID = cursor, cursor
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	rc := http.NewResponseController(w)
	var buf bytes.Buffer
	send := func() bool {
		_, err := w.Write(buf.Bytes())
		buf.Reset()
		return err == nil && rc.Flush() == nil
	}
	fmt.Fprintf(&buf, "retry: 1000\nevent: ready\nid: %s\ndata: {}\n\n", readyID)
	if !send() {
		return
	}

	// The subscription blocks in Redis between events, so it runs in its
	// own goroutine; this one writes, and sends heartbeats meanwhile.
	items := make(chan item)
	go func() {
		for ev, err := range sub.Subscribe(ctx, q) {
			select {
			case items <- item{ev, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-heartbeat.C:
			buf.WriteString(": heartbeat\n\n")
		case it := <-items:
			writeItem(&buf, it)
		}
		if !send() {
			return
		}
	}
}

// position sets where q starts from a Last-Event-ID (or ?from=): "" for
// now, "beginning" or an event cursor. It returns the id of the
// "ready" event, "" when the stream starts now.
func (s *Server) position(sub *stream.Subscriber, q *stream.Query, from string) (string, error) {
	switch {
	case from == "":
		return "", nil
	case from == "beginning" || from == stream.FromBeginning:
		q.From = stream.FromBeginning
		return stream.FromBeginning, nil
	}
	q.From = from
	if err := sub.CheckQuery(*q); err != nil {
		q.From = ""
		return "", fmt.Errorf("bad position %q: not a cursor of this stream: %w", from, err)
	}
	return from, nil
}

// writeItem writes one SSE message for an event or a subscription error.
func writeItem(buf *bytes.Buffer, it item) {
	if it.err != nil && !errors.Is(it.err, stream.ErrGap) {
		_, kind := classify(it.err)
		data, _ := json.Marshal(apiError{Error: it.err.Error(), Kind: kind})
		buf.WriteString("event: stream-error\n")
		if it.ev.Cursor != "" { // a malformed entry: resume past it
			fmt.Fprintf(buf, "id: %s\n", it.ev.Cursor)
		}
		fmt.Fprintf(buf, "data: %s\n\n", data)
		return
	}
	data, err := json.Marshal(eventOf(it.ev))
	if err != nil { // cannot happen with jsonMap; never break the stream
		data, _ = json.Marshal(apiError{Error: err.Error(), Kind: kindError})
	}
	fmt.Fprintf(buf, "id: %s\ndata: %s\n\n", it.ev.Cursor, data)
}
