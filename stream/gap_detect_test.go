package stream

import (
	"errors"
	"strings"
	"testing"
)

// TestDetectGap pins every way a checked read judges one stream: pre is the
// position before the read it accompanies, pos the position after it. A gap
// is written reason@from.
func TestDetectGap(t *testing.T) {
	held := checked{first: "5-0", preHeld: true, posHeld: true}
	tm := "4-" + maxSeq
	for _, c := range []struct {
		name, pre, pos string
		c              checked
		ahead, after   string // "" for none
		resume         string
		dropRead       bool
	}{
		{"nothing lost", "7-0", "9-0", held, "", "", "9-0", false},
		{"nothing lost, nothing read", "7-0", "7-0", held, "", "", "7-0", false},
		{"first is the position", "5-0", "5-0", held, "", "", "5-0", false},
		{"trimmed past the position", "3-0", "3-0", checked{first: "5-0"}, "", "trimmed@3-0", "3-0", false},
		{"trimmed past what the read returned", "3-0", "4-0", checked{first: "5-0"}, "trimmed@3-0", "trimmed@4-0", "4-0", false},
		{"trimmed past the position, what the read returned held", "3-0", "4-0", checked{first: "4-0", posHeld: true}, "trimmed@3-0", "", "4-0", false},
		{"rewritten after the read with later IDs", "7-0", "9-0", checked{first: "10-0"}, "trimmed@7-0", "trimmed@9-0", "9-0", false},
		{"lost after the read", "3-0", "4-0", checked{}, "trimmed@3-0", "stream_lost@4-0", "0-0", false},
		{"lost, nothing read", "3-0", "3-0", checked{}, "", "stream_lost@3-0", "0-0", false},
		{"empty stream, empty position", "0-0", "0-0", checked{}, "", "", "0-0", false},
		{"rewritten after the read", "7-0", "9-0", checked{first: "5-0"}, "trimmed@7-0", "stream_lost@9-0", "0-0", false},
		{"rewritten within the position's millisecond", "7-3", "7-3", checked{first: "7-0"}, "", "stream_lost@7-3", "0-0", false},
		{"rewritten before the read", "7-0", "9-0", checked{first: "5-0", posHeld: true}, "stream_lost@7-0", "", "0-0", true},
		{"rewritten after the position: a trim", "7-0", "9-0", checked{first: "8-0", posHeld: true}, "trimmed@7-0", "", "9-0", false},
		{"beginning claims nothing", "0-0", "9-0", held, "", "", "9-0", false},
		{"a time, deletions unreported", tm, tm, held, "", "", tm, false},
		{"a time, the stream starts past it, never trimmed", tm, "6-0", checked{first: "5-0", preHeld: true, posHeld: true, deletedKnown: true}, "", "", "6-0", false},
		{"a time, the stream starts past it and was trimmed", tm, "6-0", checked{first: "5-1", preHeld: true, posHeld: true, deleted: true, deletedKnown: true}, "trimmed@", "", "6-0", false},
		{"a time, the stream holds entries before it", tm, "6-0", checked{first: "3-0", preHeld: true, posHeld: true, deleted: true, deletedKnown: true}, "", "", "6-0", false},
		{"a time, the stream gone", tm, tm, checked{}, "", "", tm, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := detectGap("s", c.pre, c.pos, c.c)
			for _, g := range []struct {
				name, want string
				got        *GapError
			}{{"ahead", c.ahead, v.ahead}, {"after", c.after, v.after}} {
				got := ""
				if g.got != nil {
					got = g.got.Reason + "@" + g.got.From
					if g.got.Stream != "s" {
						t.Errorf("%s gap on %q", g.name, g.got.Stream)
					}
				}
				if got != g.want {
					t.Errorf("%s gap %q, want %q", g.name, got, g.want)
				}
			}
			if v.resume != c.resume || v.dropRead != c.dropRead {
				t.Errorf("resume %q drop %v, want %q %v", v.resume, v.dropRead, c.resume, c.dropRead)
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
