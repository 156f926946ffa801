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
	// keeps no trace of trimmed IDs to tell.) For a time position (a Since,
	// or a Cursor that holds one): the stream's first entry is past that
	// time and Redis trimmed the stream (it counts the entries ever added),
	// so the entries it trimmed may have been appended at or after that
	// time; when none was, nothing was lost.
	GapTrimmed = "trimmed"
	// GapStreamLost: the stream no longer exists, or is empty, though the
	// position was read from it (a restart without persistence, a FLUSH, an
	// eviction, the expiry of a deleted thread's stream); or it was lost
	// and written again with entries at or before the position (a clock
	// that went back, a loss and a write within one millisecond), told by
	// the entry at the position that it no longer holds.
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
// matches ErrGap. Subscribe yields it with an Event of TypeGap (see Gaps in
// the package documentation for its Cursor), then goes on delivering;
// Consume reports it through ConsumeOptions.OnError, once per loss, and
// goes on.
type GapError struct {
	// Stream is the key of the stream that lost events.
	Stream string `json:"stream"`
	// Reason is one of the Gap* constants.
	Reason string `json:"reason"`
	// From is the last position the reader held before the gap (an entry
	// ID; "" for a time position, or when unknown). Events after it may be
	// missing.
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
// empty stream ("0-0") or a time (beforeTime: sequence 2^64-1), which hold
// no entry.
func realPosition(id string) bool {
	ms, seq, ok := strings.Cut(id, "-")
	return ok && id != "0-0" && seq != maxSeq && ms != ""
}

// timePosition reports whether a position is a time (beforeTime): it holds
// no entry, but claims every event appended at or after that time, so a
// trim of such an event is a gap.
func timePosition(id string) bool {
	_, seq, ok := strings.Cut(id, "-")
	return ok && seq == maxSeq
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

// checked is what a checked read saw of one stream besides its entries.
type checked struct {
	// first is the first entry the stream holds ("" when it is empty or
	// gone).
	first string
	// preHeld and posHeld tell whether the stream still holds the entry at
	// the reader's position before the read the check accompanies (pre) and
	// at its position now (pos, past what that read returned). A position
	// that is not an entry ID counts as held: it claims no entry.
	preHeld, posHeld bool
	// deleted and deletedKnown: whether Redis ever deleted an entry from
	// the stream (trimmed it: XINFO STREAM's entries-added is past its
	// length), read only when the position before the read is a time
	// position and the stream exists; both set, without asking, once an
	// earlier read saw the stream hold an entry at or before that time
	// (then a first entry past it means that entry was trimmed).
	// deletedKnown is false when not read, or when the server does not
	// report entries-added (before Redis 7.0; miniredis).
	deleted, deletedKnown bool
	// judged is set by a check that judged the stream itself (a consumer
	// group's: the position is the group's, not the reader's); gap is then
	// its verdict, nil for none.
	judged bool
	gap    *GapError
	// ahead, for a judged gap: it concerns entries before those the
	// blocking read that preceded the check returned, and comes ahead of
	// them.
	ahead bool
}

// verdict is what a checked read concluded about one stream: gaps judged
// from the position before the entries the blocking read it accompanies
// returned (ahead: yielded before them; From that position) and from the
// position after them (after: yielded after them), the position to read
// on from, and whether the entries that read returned must be dropped (they
// belong to a new incarnation of the stream, which is read again from its
// start).
type verdict struct {
	ahead, after *GapError
	resume       string
	dropRead     bool
}

// detectGap decides, from what a checked read saw of a stream (c), whether
// events were lost. pre is the reader's position before the read the check
// accompanies, pos its position now (past the entries that read returned:
// pre when it returned none).
//
// Nothing but trimming removes an entry from a stream the savers write
// (from its head) or the loss of the whole stream: so a stream that no
// longer holds the entry at a position, though it holds one at or before
// it, was lost and written again, and its new entries before the position
// would be skipped by reading on from it. When the stream no longer holds
// pos either, and the read returned entries, Redis cannot tell whether it
// held pre when that read ran: events before those entries may be lost as
// well as after them, and both gaps are reported.
func detectGap(stream, pre, pos string, c checked) verdict {
	// before: the stream no longer holds pre, and the entries the read
	// returned may have followed a loss too.
	var before *GapError
	if realPosition(pre) && pre != pos && !c.preHeld {
		before = &GapError{Stream: stream, Reason: GapTrimmed, From: pre}
	}
	switch {
	case c.first == "" && realPosition(pos):
		// The reader got pos from this stream, and trimming never empties
		// a stream: it was lost after the entries just read, if any. Read
		// its next incarnation from the start.
		return verdict{ahead: before, after: &GapError{Stream: stream, Reason: GapStreamLost, From: pos}, resume: "0-0"}
	case c.first == "":
		return verdict{resume: pos}
	case realPosition(pos) && !c.posHeld && compareIDs(c.first, pos) <= 0:
		// Lost and written again after the read: its entries (if any) came
		// from the incarnation the reader knew.
		return verdict{ahead: before, after: &GapError{Stream: stream, Reason: GapStreamLost, From: pos}, resume: "0-0"}
	case realPosition(pos) && !c.posHeld:
		// The stream starts past pos, which it no longer holds: trimmed
		// past the entries the read returned (if any), or lost and written
		// again after them with later IDs.
		return verdict{ahead: before, after: &GapError{Stream: stream, Reason: GapTrimmed, From: pos, To: c.first}, resume: pos}
	case realPosition(pre) && !c.preHeld && compareIDs(c.first, pre) <= 0:
		// Lost and written again before the read: its entries came from
		// the new incarnation, which is read again from its start.
		return verdict{ahead: &GapError{Stream: stream, Reason: GapStreamLost, From: pre}, resume: "0-0", dropRead: true}
	case realPosition(pre) && compareIDs(c.first, pre) > 0:
		return verdict{ahead: &GapError{Stream: stream, Reason: GapTrimmed, From: pre, To: c.first}, resume: pos}
	case timePosition(pre) && compareIDs(c.first, pre) > 0 && c.deleted:
		// The stream starts past the time and Redis trimmed it: the
		// entries it trimmed may have been appended at or after the time.
		return verdict{ahead: &GapError{Stream: stream, Reason: GapTrimmed, To: c.first}, resume: pos}
	}
	return verdict{resume: pos}
}

// ErrTrimUnknown is yielded by Subscribe (with a zero Event, once for each
// stream concerned) when it cannot tell whether events appended at or after
// a time position (Query.Since, or a Cursor that holds one) were trimmed:
// the stream's first entry is past that time, and the server does not
// report how many entries were ever added to the stream (XINFO STREAM's
// entries-added: Redis 7.0 and later and Valkey do, miniredis does not),
// so whether it was ever trimmed is unknown. Delivery goes on from the
// stream's first entry.
var ErrTrimUnknown = errors.New("stream: cannot tell whether events after the start time were trimmed")

// trimUnknown returns an error wrapping ErrTrimUnknown when a checked read
// of a stream from the time position pre could not be judged: the stream's
// first entry is past the time and the server did not tell whether it was
// ever trimmed.
func trimUnknown(stream, pre string, c checked) error {
	if !timePosition(pre) || c.first == "" || compareIDs(c.first, pre) <= 0 || c.deletedKnown {
		return nil
	}
	ms, _ := splitID(pre)
	return fmt.Errorf("%w: %s starts at %s, after %s, and the server does not report XINFO STREAM entries-added",
		ErrTrimUnknown, stream, c.first, time.UnixMilli(int64(ms+1)).UTC().Format(time.RFC3339Nano))
}
