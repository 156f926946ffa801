package stream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrGap is matched (errors.Is) by every *GapError: events a subscription
// or a consumer group should have delivered are gone from Redis, and
// delivery went on after them.
var ErrGap = errors.New("stream: gap in the events")

// TypeGap is the type of the Event that Subscribe yields with a *GapError,
// and that ConsumeOptions.OnError receives with one. Redis never holds it.
const TypeGap EventType = "gap"

// Gap reasons.
const (
	// GapTrimmed: the position is older than the first entry the stream
	// holds: Redis trimmed the stream past it (or lost the stream, which
	// was then written again), and the events between may be gone. (When
	// the trim fell exactly after the position, there were none: Redis
	// keeps no trace of trimmed IDs to tell.)
	GapTrimmed = "trimmed"
	// GapStreamLost: the stream no longer exists, or is empty, though the
	// position was read from it (a restart without persistence, a FLUSH, an
	// eviction, the expiry of a deleted thread's stream).
	GapStreamLost = "stream_lost"
	// GapGroupLost: the consumer group vanished (with its stream, or
	// alone); Consume created it again, and its pending entries are lost.
	GapGroupLost = "group_lost"
	// GapPendingTrimmed: entries delivered to the group but not
	// acknowledged were trimmed away before they were handled; Lost holds
	// their IDs, as XAUTOCLAIM reported them.
	GapPendingTrimmed = "pending_trimmed"
)

// GapError reports events lost between two positions of one stream. It
// matches ErrGap. Subscribe yields it with an Event of TypeGap (whose Cursor
// resumes after the gap), then goes on delivering; Consume reports it
// through ConsumeOptions.OnError, once per loss, and goes on.
type GapError struct {
	// Stream is the key of the stream that lost events.
	Stream string `json:"stream"`
	// Reason is one of the Gap* constants.
	Reason string `json:"reason"`
	// From is the last position the reader held before the gap (an entry
	// ID; "" when unknown). Events after it may be missing.
	From string `json:"from,omitempty"`
	// To is the first entry the stream held after the gap: delivery goes
	// on with it. "" when the stream was gone (delivery goes on with its
	// first new entry).
	To string `json:"to,omitempty"`
	// Lost holds the IDs known to be lost: the pending entries XAUTOCLAIM
	// reported deleted. Empty when Redis cannot tell which entries it
	// removed (trimming does not keep their IDs).
	Lost []string `json:"lost,omitempty"`
}

func (e *GapError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s: %s", ErrGap, e.Stream, e.Reason)
	if e.From != "" {
		fmt.Fprintf(&b, " after %s", e.From)
	}
	if e.To != "" {
		fmt.Fprintf(&b, ", resuming at %s", e.To)
	}
	if len(e.Lost) > 0 {
		fmt.Fprintf(&b, ", %d lost: %s", len(e.Lost), strings.Join(e.Lost, " "))
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrGap) hold.
func (e *GapError) Unwrap() error { return ErrGap }

// gapEvent is the Event that carries a gap.
func gapEvent(g *GapError, threadID, cursor string) Event {
	return Event{Type: TypeGap, Stream: g.Stream, ThreadID: threadID, Cursor: cursor, Time: time.Now(), Gap: g}
}

// realPosition reports whether a position is an entry ID a reader got from
// the stream (or a cursor made of such IDs), as opposed to the start of an
// empty stream ("0-0") or a time (beforeTime: sequence 2^64-1), which say
// nothing about which events existed.
func realPosition(id string) bool {
	ms, seq, ok := strings.Cut(id, "-")
	return ok && id != "0-0" && seq != maxSeq && ms != ""
}

const maxSeq = "18446744073709551615"

// compareIDs compares two stream entry IDs (ms-seq) numerically.
func compareIDs(a, b string) int {
	am, as := splitID(a)
	bm, bs := splitID(b)
	switch {
	case am != bm:
		return cmpU(am, bm)
	default:
		return cmpU(as, bs)
	}
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func splitID(id string) (ms, seq uint64) {
	m, s, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(s, 10, 64)
	return ms, seq
}

// detectGap decides, from the first entry a stream holds now (first, ""
// when it is empty or gone), whether events after pos were lost. pos is the
// reader's position before the read that the check accompanies. It returns
// the gap (nil when none) and the position to read on from.
func detectGap(stream, pos, first string) (*GapError, string) {
	if !realPosition(pos) {
		return nil, pos
	}
	if first == "" {
		// The reader got pos from this stream, and trimming never empties
		// a stream: it was lost. Read its next incarnation from the start.
		return &GapError{Stream: stream, Reason: GapStreamLost, From: pos}, "0-0"
	}
	if compareIDs(first, pos) > 0 {
		return &GapError{Stream: stream, Reason: GapTrimmed, From: pos, To: first}, pos
	}
	return nil, pos
}
