package redistest

import (
	"testing"

	"github.com/graphstate/redcheck/internal/scriptrun"
)

func TestCommandName(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"ping"}, "ping"},
		{[]string{"del", "rctest:a", "rctest:b"}, "del rctest:a"},
		{[]string{"evalsha", scriptrun.Put.Hash(), "2", "k1", "k2"}, "evalsha put.lua"},
		{[]string{"evalsha", scriptrun.StoreScan.Hash(), "0"}, "evalsha store_scan.lua"},
		{[]string{"evalsha", "0123456789abcdef0123456789abcdef01234567", "0"}, "evalsha 0123456789abcdef0123456789abcdef01234567"},
	} {
		if got := commandName(c.args); got != c.want {
			t.Errorf("commandName(%q) = %q; want %q", c.args, got, c.want)
		}
	}
}
