package redissaver

import (
	"math"
	"strconv"
	"testing"
)

// TestTrafficBytes checks the sizes counted for each kind of argument and
// reply against their forms on the wire.
func TestTrafficBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		arg  any
		want int64
	}{
		{"string", "héllo", int64(len("héllo"))},
		{"bytes", []byte{0, 1, 2}, 3},
		{"int", 12345, 5},
		{"zero", 0, 1},
		{"negative", int64(-907), 4},
		{"min int64", int64(math.MinInt64), int64(len(strconv.FormatInt(math.MinInt64, 10)))},
		{"max uint64", uint64(math.MaxUint64), int64(len(strconv.FormatUint(math.MaxUint64, 10)))},
		{"uint32", uint32(4000000000), 10},
		{"float", 1.5, 3},
		{"bool counts nothing", true, 0},
	} {
		if got := valueBytes(c.arg); got != c.want {
			t.Errorf("%s: valueBytes(%v) = %d, want %d", c.name, c.arg, got, c.want)
		}
	}
	if got := argBytes([]string{"ab", "cde"}, []any{"f", 10}); got != 8 {
		t.Errorf("argBytes = %d, want 8", got)
	}
	reply := []any{"abc", int64(7), nil, []any{"de", []any{"f"}}, []string{"gh"}}
	if got := replyBytes(reply); got != 8 {
		t.Errorf("replyBytes = %d, want 8 (strings only)", got)
	}
	var n *opCount
	n.args([]string{"k"}, nil) // no call: nothing counted, no panic
	n.reply("v")
}
