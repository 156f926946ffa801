package stream

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Positions: a subscription to one thread resumes from a stream entry ID; a
// subscription to every thread from one ID per shard, which its Cursor
// joins with "," in shard order. Each ID a reader got from an entry is
// followed by "~" and the entry's mark (markOf), so that a stream lost and
// written again with an entry at exactly that ID is told from the one the
// reader knew.

// FromBeginning, as Query.From, starts at the oldest event Redis still
// holds.
const FromBeginning = "0"

// ErrInvalidQuery is returned (and yielded by Subscribe, which then ends)
// for a Query that can never be read: a From that is no cursor of the
// query's streams (another shard count, or not a cursor at all).
var ErrInvalidQuery = errors.New("stream: invalid query")

// markSep separates an ID from its entry's mark in a cursor.
const markSep = "~"

// parseCursor returns the IDs to read after, one per stream, and the marks
// of the entries at them ("" where the cursor holds none), for a query
// start that is FromBeginning or a cursor.
func parseCursor(cursor string, streams int) (ids, marks []string, err error) {
	ids, marks = make([]string, streams), make([]string, streams)
	if cursor == FromBeginning {
		for i := range ids {
			ids[i] = "0-0"
		}
		return ids, marks, nil
	}
	parts := strings.Split(cursor, ",")
	if len(parts) != streams {
		return nil, nil, fmt.Errorf("%w: cursor %q holds %d positions, want %d", ErrInvalidQuery, cursor, len(parts), streams)
	}
	for i, p := range parts {
		id, mark, hasMark := strings.Cut(p, markSep)
		if !validID(id) || hasMark && !validMark(mark) {
			return nil, nil, fmt.Errorf("%w: cursor %q: bad position %q", ErrInvalidQuery, cursor, p)
		}
		ids[i], marks[i] = id, mark
	}
	return ids, marks, nil
}

// validID reports whether id is a stream entry ID: ms-seq.
func validID(id string) bool {
	ms, seq, ok := strings.Cut(id, "-")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return err1 == nil && err2 == nil
}

// validMark reports whether m has the shape markOf gives: 8 lowercase hex
// digits.
func validMark(m string) bool {
	if len(m) != 8 {
		return false
	}
	for i := range len(m) {
		if c := m[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// markOf is a short digest of an entry's fields and values (in field
// order: go-redis gives them as a map), 8 lowercase hex digits. Two entries
// with the same ID in two incarnations of a stream are the same event when
// their marks match (but for a 2^-32 chance).
func markOf(msg redis.XMessage) string {
	fields := make([]string, 0, len(msg.Values))
	for f := range msg.Values {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	h := fnv.New32a()
	var buf []byte
	for _, f := range fields {
		v, _ := msg.Values[f].(string)
		buf = strconv.AppendInt(buf[:0], int64(len(f)), 10)
		buf = append(append(append(buf, ':'), f...), ' ')
		buf = strconv.AppendInt(buf, int64(len(v)), 10)
		buf = append(append(buf, ':'), v...)
		_, _ = h.Write(buf)
	}
	var out [8]byte
	sum := h.Sum32()
	for i := 7; i >= 0; i-- {
		out[i] = "0123456789abcdef"[sum&15]
		sum >>= 4
	}
	return string(out[:])
}

// beforeTime is the greatest ID below every ID at or after t.
func beforeTime(t time.Time) string {
	ms := t.UnixMilli()
	if ms <= 0 {
		return "0-0"
	}
	return strconv.FormatInt(ms-1, 10) + "-18446744073709551615"
}

// cursorOf joins positions and the marks of their entries into a cursor.
func cursorOf(ids, marks []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(id)
		if marks[i] != "" {
			b.WriteString(markSep + marks[i])
		}
	}
	return b.String()
}
