package codec

import (
	"slices"
	"testing"
)

func TestPackUnpack(t *testing.T) {
	for _, parts := range [][]string{{"a", "b"}, {"", ""}, {"ch:1", "path", "msgpack", "\x00\x01data:with:colons"}, {"12:", "x"}} {
		got := make([]string, len(parts))
		ok := Unpack(Pack(parts...), got)
		if !ok || !slices.Equal(got, parts) {
			t.Errorf("Unpack(Pack(%q)) = %q, %v", parts, got, ok)
		}
	}
	for _, bad := range []string{"", "x", "5:ab", "-1:a", "99999999999:a", ":a"} {
		if Unpack(bad, make([]string, 2)) {
			t.Errorf("Unpack(%q) accepted", bad)
		}
	}
}

// TestPackValue: PackValue is Pack of the type and the bytes, for every
// size (a large value is copied once, by one allocation).
func TestPackValue(t *testing.T) {
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i)
	}
	for _, c := range []struct {
		typ  string
		data []byte
	}{{"msgpack", nil}, {"json", []byte("{}")}, {"bytes", []byte("\x00:1:2")}, {"msgpack", big}} {
		got := PackValue(c.typ, c.data)
		if want := Pack(c.typ, string(c.data)); got != want {
			t.Errorf("PackValue(%q, %d bytes) differs from Pack", c.typ, len(c.data))
		}
		if n := testing.AllocsPerRun(3, func() { PackValue(c.typ, c.data) }); n > 2 {
			t.Errorf("PackValue(%q, %d bytes): %v allocations", c.typ, len(c.data), n)
		}
	}
}

func TestNames(t *testing.T) {
	for _, names := range [][]string{nil, {""}, {"a", "b:c", "", "12:x"}} {
		got, ok := SplitNames(JoinNames(names))
		if !ok || !slices.Equal(got, names) {
			t.Errorf("SplitNames(JoinNames(%q)) = %q, %v", names, got, ok)
		}
	}
	for _, bad := range []string{"x", "3:ab", "1:a2:b"} {
		if _, ok := SplitNames(bad); ok {
			t.Errorf("SplitNames(%q) accepted", bad)
		}
	}
}

// FuzzUnpack: no input makes the decoders panic, and what they accept packs
// back to the same bytes.
func FuzzUnpack(f *testing.F) {
	f.Add("3:abc2:dexyz")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if parts := make([]string, 3); Unpack(s, parts) && Pack(parts...) != s {
			t.Fatalf("Pack(Unpack(%q)) = %q", s, Pack(parts...))
		}
		if names, ok := SplitNames(s); ok && JoinNames(names) != s {
			t.Fatalf("JoinNames(SplitNames(%q)) = %q", s, JoinNames(names))
		}
	})
}
