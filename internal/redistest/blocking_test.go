package redistest_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// busyLoop keeps Redis busy for about 0.4 s (a few times that on a loaded
// machine): a block no other client can get past.
const busyLoop = "local i = 0 while i < 3e7 do i = i + 1 end return i"

// TestBlockMeterSeesABlock: a Lua busy loop run by EVAL blocks Redis; the
// meter, PINGing from this process or from redis-cli, sees it in PING and
// in SLOWLOG and names it; after a Reset, an idle phase shows no block.
func TestBlockMeterSeesABlock(t *testing.T) {
	for _, tc := range []struct {
		name string
		cli  bool
	}{{"goroutine", false}, {"redis-cli", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath("redis-cli"); tc.cli && err != nil {
				t.Skip("redis-cli is not on PATH")
			}
			rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t)})
			t.Cleanup(func() { _ = rdb.Close() })
			ctx := context.Background()
			m := redistest.NewBlockMeter(t, rdb, redistest.BlockMeterOptions{RedisCLI: tc.cli})

			start := time.Now()
			if err := rdb.Eval(ctx, busyLoop, nil).Err(); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			ping, slow, cmd := m.Read(t)
			t.Logf("EVAL of %v: worst PING %v, worst SLOWLOG %v (%s)", took, ping, slow, cmd)
			if slow < 100*time.Millisecond || slow > took {
				t.Errorf("SLOWLOG read %v for an EVAL of %v; want 100 ms or more, and no more than the EVAL", slow, took)
			}
			want := "eval " + busyLoop
			if cmd != want {
				t.Errorf("slowest command %q; want %q", cmd, want)
			}
			// A PING sent during the loop waits for its end: it reads the
			// loop less the pause before it was sent (10 ms for redis-cli,
			// 0.2 ms in-process, more when the machine is busy).
			if ping < slow*3/4 {
				t.Errorf("worst PING %v; want at least 3/4 of the loop's %v", ping, slow)
			}
			if tc.cli && ping%time.Millisecond != 0 {
				t.Errorf("worst PING %v is not whole milliseconds: not redis-cli's", ping)
			}

			m.Reset(t)
			time.Sleep(50 * time.Millisecond)
			idlePing, idleSlow, idleCmd := m.Read(t)
			t.Logf("idle: worst PING %v, worst SLOWLOG %v (%s)", idlePing, idleSlow, idleCmd)
			// Forgotten: nothing near the block's length, and not the
			// loop. (An idle command can still log a few ms: a VM here
			// stalls processes for up to 31 ms, redis-cli --intrinsic-latency.)
			if idleSlow >= slow/2 || idleCmd == want || idlePing >= slow/2 {
				t.Errorf("after Reset, idle: worst PING %v, SLOWLOG %v (%q); want the block forgotten", idlePing, idleSlow, idleCmd)
			}
		})
	}
}
