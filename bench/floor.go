package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The same-bytes floor (issue 14): for every redcheck pass, the harness
// measures on the same server, through the limit's client, at the same
// concurrency and interleaved with it:
//
//   - SET:<op>, a SET whose request is exactly as many bytes as the
//     operation sends on average;
//   - GET:<op>, a GET whose reply is exactly as many bytes as the operation
//     receives on average;
//   - EVALSHA:<op>, a no-op script (return 1) called with the arguments of
//     one of the operation's calls (keys and ARGV byte for byte, in the same
//     round trips): the cost of entering Lua with those arguments.
//
// The sizes and arguments come from a calibration: operations of the pass
// run one at a time before the measurement, each with a capture in its
// context that the meter's hook fills.
const (
	implFloor    = "floor"
	floorSet     = "SET:"
	floorGet     = "GET:"
	floorEvalSha = "EVALSHA:"
	floorDefin   = "same-bytes floor: the dearer of SET:<op> (a SET sending exactly the operation's mean bytes sent) and GET:<op> (a GET receiving exactly its mean bytes received), on the same server, client and concurrency, interleaved with the operation; at concurrency 1 ratio_to_floor = p50 / the floor's p50, at higher concurrency the floor's ops/s (the lower of the two) / ops/s. EVALSHA:<op> is a no-op script called with the operation's own keys and arguments (the cost of entering Lua)."
)

// captureKey is the context key of a capture.
type captureKey struct{}

// scriptArgs is one script call: its keys and ARGV, copied.
type scriptArgs struct {
	keys []string
	args []any
}

// roundTrip is the script calls of one round trip (several when pipelined).
type roundTrip struct {
	calls     []scriptArgs
	pipelined bool
}

// capture records the script calls of one operation.
type capture struct {
	mu    sync.Mutex
	trips []roundTrip
}

// add records the EVALSHA and EVAL calls among cmds, sent in one round trip.
func (c *capture) add(cmds []redis.Cmder, pipelined bool) {
	rt := roundTrip{pipelined: pipelined}
	for _, cmd := range cmds {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			continue
		}
		if sa, ok := parseScriptArgs(cmd.Args()); ok {
			rt.calls = append(rt.calls, sa)
		}
	}
	if len(rt.calls) == 0 {
		return
	}
	c.mu.Lock()
	c.trips = append(c.trips, rt)
	c.mu.Unlock()
}

// parseScriptArgs splits the arguments of EVALSHA sha numkeys key... arg...
// into keys and ARGV, copying byte slices (a caller may reuse them).
func parseScriptArgs(a []any) (scriptArgs, bool) {
	if len(a) < 3 {
		return scriptArgs{}, false
	}
	var nk int
	switch v := a[2].(type) {
	case int:
		nk = v
	case int64:
		nk = int(v)
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			return scriptArgs{}, false
		}
		nk = n
	default:
		return scriptArgs{}, false
	}
	if nk < 0 || 3+nk > len(a) {
		return scriptArgs{}, false
	}
	var sa scriptArgs
	for _, k := range a[3 : 3+nk] {
		sa.keys = append(sa.keys, fmt.Sprint(k))
	}
	for _, v := range a[3+nk:] {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		sa.args = append(sa.args, v)
	}
	return sa, true
}

// bytes returns the ARGV bytes of the round trip's calls (strings only;
// numbers are a few bytes each).
func (rt roundTrip) argBytes() int {
	n := 0
	for _, c := range rt.calls {
		for _, a := range c.args {
			if s, ok := a.(string); ok {
				n += len(s)
			}
		}
	}
	return n
}

// calibration is what the calibration of one pass found.
type calibration struct {
	Impl        string  `json:"impl"`
	Op          string  `json:"op"`
	Concurrency int     `json:"concurrency"`
	Ops         int     `json:"calibration_ops"`
	Sent        float64 `json:"mean_sent"`
	Recv        float64 `json:"mean_received"`
	SetValue    int     `json:"set_value_bytes"`
	GetValue    int     `json:"get_value_bytes"`
	ScriptTrips int     `json:"script_round_trips"`
	ScriptCalls int     `json:"script_calls"`
	ScriptArgs  int     `json:"script_argv_bytes"`

	rep []roundTrip
}

// calibrate runs up to maxOps operations of p one at a time, within budget
// but at least one, and returns their mean
// bytes and the script calls of the operation whose bytes are nearest the
// mean. They count as p's warmup, not as measured. The operations are
// spread evenly over p's goroutine numbers (a Put pass's goroutines write
// threads that start at different steps: their state sizes differ).
func calibrate(ctx context.Context, p *pass, maxOps int, budget time.Duration) (calibration, error) {
	cal := calibration{Impl: p.impl, Op: p.op, Concurrency: p.conc}
	if p.meter == nil {
		return cal, fmt.Errorf("calibrate %s: no meter", p.op)
	}
	type one struct {
		bytes int64
		trips []roundTrip
	}
	var ops []one
	var sent, recv int64
	start := time.Now()
	maxOps = max(maxOps, 1)
	for j := 0; j < maxOps && (j == 0 || time.Since(start) < budget); j++ {
		c := &capture{}
		u0 := p.meter.load()
		err := p.do(context.WithValue(ctx, captureKey{}, c), j*p.conc/maxOps, p.next)
		u := p.meter.load().minus(u0)
		p.next++
		if err != nil {
			return cal, fmt.Errorf("calibrate %s: %w", p.op, err)
		}
		sent += u.sent
		recv += u.recv
		ops = append(ops, one{u.sent + u.recv, c.trips})
	}
	n := len(ops)
	cal.Ops = n
	cal.Sent, cal.Recv = float64(sent)/float64(n), float64(recv)/float64(n)
	mean := cal.Sent + cal.Recv
	best := 0
	for i, o := range ops {
		if abs(float64(o.bytes)-mean) < abs(float64(ops[best].bytes)-mean) {
			best = i
		}
	}
	cal.rep = ops[best].trips
	cal.ScriptTrips = len(cal.rep)
	for _, rt := range cal.rep {
		cal.ScriptCalls += len(rt.calls)
		cal.ScriptArgs += rt.argBytes()
	}
	return cal, nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// floorPasses returns the SET, GET and no-op EVALSHA passes of cal, run
// through the limit's client at cal's concurrency with the operation's
// number of operations, warmup and time.
func (h *harness) floorPasses(ctx context.Context, p *pass, cal *calibration) []*pass {
	key := h.prefix(fmt.Sprintf("floor-%s-%d", p.op, p.conc))
	cal.SetValue = setValueLen(key+":set", int(cal.Sent+0.5))
	cal.GetValue = getValueLen(int(cal.Recv + 0.5))
	setVal := strings.Repeat("s", cal.SetValue)
	err := h.lclient.Set(ctx, key+":get", strings.Repeat("g", cal.GetValue), 0).Err()
	sha, serr := h.lclient.ScriptLoad(ctx, "return 1").Result()
	mk := func(prefix string, do func(ctx context.Context, w, i int) error) *pass {
		return &pass{impl: implFloor, op: prefix + p.op, conc: p.conc, maxOps: p.maxOps, warmup: max(p.warmup, p.conc),
			budget: p.budget, meter: h.lmeter, stats: p.stats, err: err, do: do}
	}
	set := mk(floorSet, func(ctx context.Context, _, _ int) error {
		return h.lclient.Set(ctx, key+":set", setVal, 0).Err()
	})
	get := mk(floorGet, func(ctx context.Context, _, _ int) error {
		return h.lclient.Get(ctx, key+":get").Err()
	})
	out := []*pass{set, get}
	if len(cal.rep) > 0 {
		ev := mk(floorEvalSha, func(ctx context.Context, _, _ int) error { return replayNoop(ctx, h.lclient, sha, cal.rep) })
		if ev.err == nil {
			ev.err = serr
		}
		out = append(out, ev)
	}
	return out
}

// replayNoop sends the script calls of trips, round trip by round trip,
// to the script of sha (a no-op) instead of theirs.
func replayNoop(ctx context.Context, c *redis.Client, sha string, trips []roundTrip) error {
	for _, rt := range trips {
		if !rt.pipelined && len(rt.calls) == 1 {
			if err := c.EvalSha(ctx, sha, rt.calls[0].keys, rt.calls[0].args...).Err(); err != nil {
				return err
			}
			continue
		}
		_, err := c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, sc := range rt.calls {
				pipe.EvalSha(ctx, sha, sc.keys, sc.args...)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// bulkLen is the length of a RESP bulk string of n bytes: $<n>\r\n<n bytes>\r\n.
func bulkLen(n int) int { return 1 + len(strconv.Itoa(n)) + 2 + n + 2 }

// fitBulk returns the largest n with bulkLen(n) <= total (0 when none).
func fitBulk(total int) int {
	n := max(total-5, 0)
	for n > 0 && bulkLen(n) > total {
		n--
	}
	return n
}

// setValueLen returns the value length that makes SET key value exactly
// total bytes on the wire (*3, then three bulk strings), or the nearest
// below (0 when even an empty value is larger).
func setValueLen(key string, total int) int {
	fixed := len("*3\r\n") + bulkLen(len("set")) + bulkLen(len(key))
	return fitBulk(total - fixed)
}

// getValueLen returns the value length whose GET reply (a bulk string) is
// exactly total bytes, or the nearest below.
func getValueLen(total int) int { return fitBulk(total) }
