package scripts_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/scripts"
	"github.com/redis/go-redis/v9"
)

// TestClockMsString: clock_ms's string, made from TIME's digits, is the
// decimal of its number (what ZRANGEBYSCORE compares against), whatever the
// microseconds TIME gives (no leading zeros, from 0 to 999999).
func TestClockMsString(t *testing.T) {
	fn, ok := scripts.HelperText("clock_ms")
	if !ok || !strings.Contains(fn, "redis.call('TIME')") {
		t.Fatalf("lib.lua has no clock_ms reading TIME:\n%s", fn)
	}
	// TIME's reply comes from ARGV, so every case is exact.
	src := strings.Replace(fn, "redis.call('TIME')", "{ARGV[1], ARGV[2]}", 1) +
		"local n, s = clock_ms()\nreturn {string.format('%d', n), s}\n"
	_, mini := redistest.Mini(t)
	for name, c := range map[string]*redis.Client{"miniredis": mini, "redis": redistest.Real(t)} {
		t.Run(name, func(t *testing.T) {
			for _, us := range []int{0, 5, 999, 1000, 1999, 12345, 100000, 999999} {
				sec := 1732460000
				got, err := c.Eval(context.Background(), src, nil, sec, us).StringSlice()
				if err != nil {
					t.Fatal(err)
				}
				want := strconv.Itoa(sec*1000 + us/1000)
				if len(got) != 2 || got[0] != want || got[1] != want {
					t.Errorf("TIME %d %d: clock_ms gave %q, want %s as number and string", sec, us, got, want)
				}
			}
		})
	}
}
