package redisstore

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestEncodeNS(t *testing.T) {
	tests := []struct {
		ns   []string
		want string
	}{
		{[]string{"users", "123"}, "users:123"},
		{[]string{"a:b", "c"}, "a%3Ab:c"},
		{[]string{"a", "b:c"}, "a:b%3Ac"},
		{[]string{"{x}", "*", "%"}, "%7Bx%7D:%2A:%25"},
		{[]string{"日"}, "%E6%97%A5"},
	}
	for _, tt := range tests {
		if got := encodeNS(tt.ns); got != tt.want {
			t.Errorf("encodeNS(%q) = %q, want %q", tt.ns, got, tt.want)
		}
		back, err := decodeNS(tt.want)
		if err != nil || !slices.Equal(back, tt.ns) {
			t.Errorf("decodeNS(%q) = %q, %v", tt.want, back, err)
		}
	}
	for _, bad := range []string{"", "a::b", "a:", "%zz", "a b"} {
		if _, err := decodeNS(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeNS(%q) = %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestMember(t *testing.T) {
	if got, want := member([]string{"a", "b\x00c"}), "a\x00\x01b\x00\xffc\x00\x01\x00\x00a:b%00c"; got != want {
		t.Fatalf("member = %q, want %q", got, want)
	}
	lo, hi := lexRange([]string{"a", "b"})
	if lo != "[a\x00\x01b\x00\x01" || hi != "(a\x00\x01b\x00\x02" {
		t.Fatalf("lexRange = %q, %q", lo, hi)
	}
	if lo, hi := lexRange(nil); lo != "-" || hi != "+" {
		t.Fatalf("lexRange(nil) = %q, %q", lo, hi)
	}
}

// memberOrderAgrees checks, for two namespaces, that registry members order
// like the label tuples, and that the prefix range of a holds b exactly when
// a is a label prefix of b.
func memberOrderAgrees(t *testing.T, a, b []string) {
	t.Helper()
	ma, mb := member(a), member(b)
	if got, want := sign(strings.Compare(ma, mb)), sign(slices.Compare(a, b)); got != want {
		t.Fatalf("order of %q and %q: members %d, tuples %d", a, b, got, want)
	}
	lo, hi := lexRange(a)
	in := mb >= lo[1:] && mb < hi[1:]
	isPrefix := len(a) <= len(b) && slices.Equal(a, b[:len(a)])
	if in != isPrefix {
		t.Fatalf("range of %q holds %q: %v, label prefix: %v", a, b, in, isPrefix)
	}
	if (ma == mb) != slices.Equal(a, b) {
		t.Fatalf("members of %q and %q collide", a, b)
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestMemberOrder(t *testing.T) {
	nss := [][]string{
		{"a"}, {"a", "b"}, {"ab"}, {"a b"}, {"a:"}, {"a\x00"}, {"a\x00", "b"}, {"a\x00\x01"}, {"a\x00\xff"},
		{"a\x01"}, {"a", "\x00"}, {"a", "\xff"}, {"a\xff"}, {"\xff"}, {"\x00"}, {"%"}, {"%25"}, {"a", "b", "c"},
		{"user1"}, {"user", "x"}, {"a", "b\x00"}, {"a", "b", "\x00"},
	}
	for _, a := range nss {
		for _, b := range nss {
			memberOrderAgrees(t, a, b)
		}
	}
}

// splitLabels turns fuzz bytes into labels: 0x1f separates them, empty
// labels are dropped (items never have them).
func splitLabels(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\x1f") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func FuzzMemberOrder(f *testing.F) {
	f.Add("a\x1fb", "ab")
	f.Add("a\x00", "a\x1f\x00")
	f.Add("a\x00\x01", "a\x1f\x01")
	f.Add("x:y", "x\x1fy")
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := splitLabels(x), splitLabels(y)
		if len(a) == 0 || len(b) == 0 {
			return
		}
		memberOrderAgrees(t, a, b)
		// The encoded form is injective too, and is what follows "\0\0".
		ma := member(a)
		enc := ma[strings.Index(ma, "\x00\x00")+2:]
		back, err := decodeNS(enc)
		if err != nil || !slices.Equal(back, a) {
			t.Fatalf("encoded form of %q decodes to %q, %v", a, back, err)
		}
	})
}

func TestSplitID(t *testing.T) {
	ns, key, err := splitID("a%3Ab:c:k%3A1")
	if err != nil || !slices.Equal(ns, []string{"a:b", "c"}) || key != "k:1" {
		t.Fatalf("splitID = %q, %q, %v", ns, key, err)
	}
	ns, key, err = splitID("a:")
	if err != nil || !slices.Equal(ns, []string{"a"}) || key != "" {
		t.Fatalf("splitID(a:) = %q, %q, %v", ns, key, err)
	}
	for _, bad := range []string{"nocolon", ":k", "a:%zz"} {
		if _, _, err := splitID(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("splitID(%q) = %v", bad, err)
		}
	}
}
