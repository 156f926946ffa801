package stream

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Positions: a subscription to one thread resumes from a stream entry ID; a
// subscription to every thread from one ID per shard, which its Cursor
// joins with "," in shard order.

// FromBeginning, as Query.From, starts at the oldest event Redis still
// holds.
const FromBeginning = "0"

// positions returns the IDs to read after, one per stream, for a query
// start: "" (now), FromBeginning, a cursor, or a time.
func parseCursor(cursor string, streams int) ([]string, error) {
	if cursor == FromBeginning {
		out := make([]string, streams)
		for i := range out {
			out[i] = "0-0"
		}
		return out, nil
	}
	ids := strings.Split(cursor, ",")
	if len(ids) != streams {
		return nil, fmt.Errorf("stream: cursor %q holds %d positions, want %d", cursor, len(ids), streams)
	}
	for _, id := range ids {
		if !validID(id) {
			return nil, fmt.Errorf("stream: cursor %q: bad id %q", cursor, id)
		}
	}
	return ids, nil
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

// beforeTime is the greatest ID below every ID at or after t.
func beforeTime(t time.Time) string {
	ms := t.UnixMilli()
	if ms <= 0 {
		return "0-0"
	}
	return strconv.FormatInt(ms-1, 10) + "-18446744073709551615"
}

func cursorOf(ids []string) string { return strings.Join(ids, ",") }
