package stream

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestParseCursor: every shape Query.From takes as a cursor, and the ones
// it refuses with ErrInvalidQuery.
func TestParseCursor(t *testing.T) {
	for _, c := range []struct {
		cursor     string
		streams    int
		ids, marks string // joined by " "; "" for an error
	}{
		{FromBeginning, 2, "0-0 0-0", " "},
		{"5-1", 1, "5-1", ""},
		{"5-1~0a1b2c3d", 1, "5-1", "0a1b2c3d"},
		{"5-1~0a1b2c3d,0-0,7-0", 3, "5-1 0-0 7-0", "0a1b2c3d  "},
		{"18446744073709551615-18446744073709551615", 1, "18446744073709551615-18446744073709551615", ""},
		{"5-1", 2, "", ""},            // another stream count
		{"5-1,6-0", 1, "", ""},        // likewise
		{"garbage", 1, "", ""},        // no ID
		{"5", 1, "", ""},              // no sequence
		{"5-x", 1, "", ""},            // likewise
		{"-5-1", 1, "", ""},           // a sign
		{"5-1~", 1, "", ""},           // an empty mark
		{"5-1~0A1B2C3D", 1, "", ""},   // upper case
		{"5-1~0a1b2c3", 1, "", ""},    // 7 digits
		{"5-1~0a1b2c3d~0", 1, "", ""}, // two marks
		{"5-1~0a1b2c3g", 1, "", ""},   // not hex
		{"5-1,", 2, "", ""},           // an empty position
		{"", 1, "", ""},               // nothing
		{"0a1b2c3d~5-1", 1, "", ""},   // mark first
	} {
		ids, marks, err := parseCursor(c.cursor, c.streams)
		if c.ids == "" {
			if !errors.Is(err, ErrInvalidQuery) {
				t.Errorf("%q over %d streams: err %v, want ErrInvalidQuery", c.cursor, c.streams, err)
			}
			continue
		}
		if err != nil || strings.Join(ids, " ") != c.ids || strings.Join(marks, " ") != c.marks {
			t.Errorf("%q over %d streams: %q %q %v, want %q %q", c.cursor, c.streams, ids, marks, err, c.ids, c.marks)
		}
	}
}

// TestMark: an entry's mark depends on its fields and values, not on the
// map's order, and tells apart entries that differ anywhere, or only in
// where one string ends and the next starts.
func TestMark(t *testing.T) {
	msg := func(kv ...string) redis.XMessage {
		m := redis.XMessage{ID: "1-0", Values: map[string]any{}}
		for i := 0; i < len(kv); i += 2 {
			m.Values[kv[i]] = kv[i+1]
		}
		return m
	}
	a := markOf(msg("t", "checkpoint", "th", "x", "id", "01A"))
	if !validMark(a) {
		t.Fatalf("mark %q has not the shape parseCursor takes", a)
	}
	for range 20 { // a map's order changes between ranges
		if b := markOf(msg("id", "01A", "th", "x", "t", "checkpoint")); b != a {
			t.Fatalf("marks %q and %q of the same entry", a, b)
		}
	}
	seen := map[string]string{a: "the entry"}
	for name, m := range map[string]redis.XMessage{
		"another value":        msg("t", "checkpoint", "th", "x", "id", "01B"),
		"another field":        msg("t", "checkpoint", "th", "x", "ix", "01A"),
		"one field less":       msg("t", "checkpoint", "th", "x"),
		"a boundary moved":     msg("t", "checkpoint", "th", "x", "i", "d01A"),
		"a value's end moved":  msg("t", "checkpointth", "h", "x", "id", "01A"),
		"no field":             msg(),
		"an empty field/value": msg("", ""),
	} {
		mk := markOf(m)
		if other, dup := seen[mk]; dup {
			t.Errorf("%s: mark %q, as %s", name, mk, other)
		}
		seen[mk] = name
	}
}

// FuzzParseCursor: parseCursor never panics, accepts only what it can
// give back, and reads back any cursor cursorOf writes.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"0", "5-1", "5-1~0a1b2c3d,0-0", "5-1~", ",", "~", "1-1,2-2,3-3"} {
		f.Add(s, 1)
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, cursor string, streams int) {
		if streams < 1 || streams > 64 {
			return
		}
		ids, marks, err := parseCursor(cursor, streams)
		if err != nil {
			if !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("%q: error %v without ErrInvalidQuery", cursor, err)
			}
			return
		}
		if len(ids) != streams || len(marks) != streams {
			t.Fatalf("%q: %d ids and %d marks over %d streams", cursor, len(ids), len(marks), streams)
		}
		again := cursorOf(ids, marks)
		ids2, marks2, err := parseCursor(again, streams)
		if err != nil || strings.Join(ids2, ",") != strings.Join(ids, ",") || strings.Join(marks2, ",") != strings.Join(marks, ",") {
			t.Fatalf("%q → %q: read back %q %q %v", cursor, again, ids2, marks2, err)
		}
	})
}
