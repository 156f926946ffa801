package checkpoint

import (
	"regexp"
	"strings"
	"testing"
)

var ownVersion = regexp.MustCompile(`^[0-9]{12,}\.[0-9a-f]{8}$`)

func TestNextVersion(t *testing.T) {
	tests := []struct {
		current    string
		wantPrefix string // integer part and "."
	}{
		{"", "000000000001."},
		{"1", "000000000002."},
		{"7", "000000000008."},
		{"000000000007", "000000000008."},
		{"000000000009.0a1b2c3d", "000000000010."},
		{"000000000099.ffffffff", "000000000100."},
		{"00000000000000000000000000000005.0.123", "00000000000000000000000000000006."},
		{"00000000000000000000000000000009.0.5", "00000000000000000000000000000010."},
		{"1.5", "000000000002."},
		{"999999999999.00000000", "1000000000000."},
		{"99999999999999999999999999999999999999", "100000000000000000000000000000000000000."},
	}
	for _, tt := range tests {
		got := NextVersion(tt.current)
		if !strings.HasPrefix(got, tt.wantPrefix) || !ownVersion.MatchString(got) {
			t.Errorf("NextVersion(%q) = %q, want %s<8 hex>", tt.current, got, tt.wantPrefix)
		}
	}
}

func TestNextVersionOrdering(t *testing.T) {
	starts := []string{"", "000000000000", "000000000007", "123456789012",
		"00000000000000000000000000000005.0.123", "000000000041.deadbeef"}
	for _, v := range starts {
		for range 1000 {
			next := NextVersion(v)
			if next <= v {
				t.Fatalf("NextVersion(%q) = %q is not greater", v, next)
			}
			v = next
		}
	}
}

func TestNextVersionForks(t *testing.T) {
	v := NextVersion("")
	seen := map[string]bool{}
	for range 1000 {
		seen[NextVersion(v)] = true
	}
	if len(seen) < 990 {
		t.Errorf("1000 forks of %q gave only %d distinct versions", v, len(seen))
	}
}

func TestNextVersionGarbage(t *testing.T) {
	for _, g := range []string{"abc", ".5", "-1", "1a", "x.y.z", "~", "a~000000000001.ABCDEF01",
		"\xff\x00", "1~000000000003.0123abcd"} {
		v := g
		for i := range 50 {
			next := NextVersion(v)
			if next <= v {
				t.Fatalf("%q step %d: NextVersion(%q) = %q is not greater", g, i, v, next)
			}
			// Every step keeps what comes before the last "~".
			if j := strings.LastIndexByte(next, '~'); j < 0 || !strings.HasPrefix(v, next[:j]) {
				t.Fatalf("%q step %d: %q does not extend %q", g, i, next, v)
			}
			v = next
		}
		if len(v) > len(g)+1+21 {
			t.Errorf("%q grew to %q after 50 steps", g, v)
		}
	}
}
