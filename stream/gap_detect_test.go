package stream

import (
	"errors"
	"strings"
	"testing"
)

// TestDetectGap pins every way a checked read judges one stream: pre is the
// position before the read it accompanies, pos the position after it.
func TestDetectGap(t *testing.T) {
	held := checked{first: "5-0", preHeld: true, posHeld: true}
	for _, c := range []struct {
		name, pre, pos string
		c              checked
		reason, from   string // reason "" for no gap
		resume         string
		dropRead       bool
	}{
		{"nothing lost", "7-0", "9-0", held, "", "", "9-0", false},
		{"nothing lost, nothing read", "7-0", "7-0", held, "", "", "7-0", false},
		{"first is the position", "5-0", "5-0", held, "", "", "5-0", false},
		{"trimmed past the position", "3-0", "3-0", checked{first: "5-0", preHeld: false, posHeld: false}, GapTrimmed, "3-0", "3-0", false},
		{"trimmed past what the read returned", "3-0", "4-0", checked{first: "5-0"}, GapTrimmed, "4-0", "4-0", false},
		{"trimmed past the position, what the read returned held", "3-0", "4-0", checked{first: "4-0", posHeld: true}, GapTrimmed, "3-0", "4-0", false},
		{"rewritten after the read with later IDs", "7-0", "9-0", checked{first: "10-0", preHeld: false, posHeld: false}, GapTrimmed, "9-0", "9-0", false},
		{"lost after the read", "3-0", "4-0", checked{}, GapStreamLost, "4-0", "0-0", false},
		{"lost, nothing read", "3-0", "3-0", checked{}, GapStreamLost, "3-0", "0-0", false},
		{"empty stream, empty position", "0-0", "0-0", checked{}, "", "", "0-0", false},
		{"rewritten after the read", "7-0", "9-0", checked{first: "5-0", preHeld: false, posHeld: false}, GapStreamLost, "9-0", "0-0", false},
		{"rewritten within the position's millisecond", "7-3", "7-3", checked{first: "7-0", preHeld: false, posHeld: false}, GapStreamLost, "7-3", "0-0", false},
		{"rewritten before the read", "7-0", "9-0", checked{first: "5-0", preHeld: false, posHeld: true}, GapStreamLost, "7-0", "0-0", true},
		{"rewritten after the position: a trim", "7-0", "9-0", checked{first: "8-0", preHeld: false, posHeld: true}, GapTrimmed, "7-0", "9-0", false},
		{"beginning claims nothing", "0-0", "9-0", checked{first: "5-0", preHeld: true, posHeld: true}, "", "", "9-0", false},
		{"a time, deletions unreported", "4-" + maxSeq, "4-" + maxSeq, checked{first: "5-0", preHeld: true, posHeld: true}, "", "", "4-" + maxSeq, false},
		{"a time, the stream starts past it, never trimmed", "4-" + maxSeq, "6-0", checked{first: "5-0", preHeld: true, posHeld: true, deletedKnown: true}, "", "", "6-0", false},
		{"a time, the stream starts past it and was trimmed", "4-" + maxSeq, "6-0", checked{first: "5-1", preHeld: true, posHeld: true, deleted: true, deletedKnown: true}, GapTrimmed, "", "6-0", false},
		{"a time, the stream holds entries before it", "4-" + maxSeq, "6-0", checked{first: "3-0", preHeld: true, posHeld: true, deleted: true, deletedKnown: true}, "", "", "6-0", false},
		{"a time, the stream gone", "4-" + maxSeq, "4-" + maxSeq, checked{}, "", "", "4-" + maxSeq, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, resume, drop := detectGap("s", c.pre, c.pos, c.c)
			switch {
			case c.reason == "" && g != nil:
				t.Fatalf("gap %v, want none", g)
			case c.reason != "" && g == nil:
				t.Fatalf("no gap, want %s", c.reason)
			case g != nil && (g.Reason != c.reason || g.From != c.from || g.Stream != "s"):
				t.Errorf("gap %+v, want %s from %s", g, c.reason, c.from)
			}
			if g != nil && g.Reason == GapTrimmed && g.To != c.c.first {
				t.Errorf("gap to %q, want the first entry %q", g.To, c.c.first)
			}
			if resume != c.resume || drop != c.dropRead {
				t.Errorf("resume %q drop %v, want %q %v", resume, drop, c.resume, c.dropRead)
			}
		})
	}
}

// TestTrimUnknown: a time position whose stream starts past it cannot be
// judged without knowing whether the stream was ever trimmed; every other case needs
// none.
func TestTrimUnknown(t *testing.T) {
	at := "4-" + maxSeq // 5 ms after the epoch
	for _, c := range []struct {
		name, pre string
		c         checked
		unknown   bool
	}{
		{"starts past the time, unreported", at, checked{first: "5-0"}, true},
		{"starts past the time, reported", at, checked{first: "5-0", deletedKnown: true}, false},
		{"holds entries before the time", at, checked{first: "4-0"}, false},
		{"gone", at, checked{}, false},
		{"an entry position", "4-0", checked{first: "5-0"}, false},
		{"the beginning", "0-0", checked{first: "5-0"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := trimUnknown("s", c.pre, c.c)
			if (err != nil) != c.unknown || err != nil && !errors.Is(err, ErrTrimUnknown) {
				t.Fatalf("got %v, want unknown %v", err, c.unknown)
			}
			if err != nil && !strings.Contains(err.Error(), "1970-01-01T00:00:00.005Z") {
				t.Errorf("%v: does not name the time", err)
			}
		})
	}
}
