// Package scriptrun is the one place that sends redcheck's Lua scripts to
// Redis: EVALSHA, with EVAL when Redis lacks the script, alone or many at
// once in one pipeline. The saver and the store use it.
package scriptrun

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Call is one call of a script: its keys and arguments.
type Call struct {
	Keys []string
	Args []any
}

// Run runs a script once: EVALSHA, and EVAL when Redis does not have it
// cached (go-redis's Script.Run).
func Run(ctx context.Context, rdb redis.Scripter, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	return sc.Run(ctx, rdb, keys, args...)
}

// Pipelined runs one script many times in one pipeline (one round trip per
// Redis node). Calls that Redis answered NOSCRIPT (a node that lacks the
// script: such a call did not run) are sent again, alone, once the script
// is loaded; calls that ran are never sent again. The first error of a call
// other than redis.Nil is returned; otherwise the commands, in the order of
// calls.
func Pipelined(ctx context.Context, rdb redis.UniversalClient, sc *redis.Script, calls []Call) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(calls))
	todo := make([]int, len(calls))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		pipe := rdb.Pipeline()
		for _, i := range todo {
			cmds[i] = sc.EvalSha(ctx, pipe, calls[i].Keys, calls[i].Args...)
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		var again []int
		for _, i := range todo {
			err := cmds[i].Err()
			switch {
			case err == nil || errors.Is(err, redis.Nil):
			case attempt == 0 && redis.HasErrorPrefix(err, "NOSCRIPT"):
				again = append(again, i)
			default:
				return nil, err
			}
		}
		if len(again) > 0 {
			if err := sc.Load(ctx, rdb).Err(); err != nil {
				return nil, err
			}
		}
		todo = again
	}
	return cmds, nil
}

// RunTx runs a script once in one MULTI/EXEC (one round trip), between the
// commands that before and after queue (either may be nil): they and the
// script take effect together, with nothing of another client's in between.
// On a Cluster every key must be in one slot. The commands must be
// idempotent: when Redis lacks the script (NOSCRIPT: it did not run), the
// script is loaded and the whole transaction is sent once more. Returns the
// script's command, carrying the error of a command before it or of the
// transaction when the script did not run, and the commands after it.
func RunTx(ctx context.Context, rdb redis.UniversalClient, sc *redis.Script, before, after func(redis.Pipeliner), keys []string, args ...any) (*redis.Cmd, []redis.Cmder) {
	for attempt := 0; ; attempt++ {
		pipe := rdb.TxPipeline()
		if before != nil {
			before(pipe)
		}
		cmd := sc.EvalSha(ctx, pipe, keys, args...)
		n := pipe.Len()
		if after != nil {
			after(pipe)
		}
		cmds, err := pipe.Exec(ctx)
		if err != nil && cmd.Err() == nil {
			cmd.SetErr(err) // the transaction failed before the script ran, or a command before it failed
			for _, c := range cmds {
				if c.Err() != nil && c != redis.Cmder(cmd) {
					cmd.SetErr(c.Err())
					break
				}
			}
		}
		var rest []redis.Cmder
		if len(cmds) >= n {
			rest = cmds[n:]
		}
		if attempt > 0 || !redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			return cmd, rest
		}
		if err := sc.Load(ctx, rdb).Err(); err != nil {
			cmd.SetErr(err)
			return cmd, rest
		}
	}
}
