package redistest

import (
	"context"
	"net"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// maxCommands bounds how many command names a Counter remembers between
// resets, so that a benchmark does not grow it without end.
const maxCommands = 4096

// Counter counts the round trips a go-redis client makes; see
// [CountRoundTrips]. It is safe for concurrent use.
type Counter struct {
	trips atomic.Int64
	dials atomic.Int64

	mu       sync.Mutex
	commands []string
}

// CountRoundTrips adds a hook to c that counts its round trips and returns
// the counter. Each command sent on its own counts one round trip; each
// pipeline or MULTI/EXEC transaction counts one, however many commands it
// holds. On a cluster client a pipeline spanning several nodes still counts
// one.
//
// Commands that go-redis sends by itself while setting up a new connection
// for a counted command (HELLO, CLIENT SETINFO, AUTH, SELECT, ...) are not
// counted: they are connection setup, not the cost of the operation, and
// they would make counts depend on the state of the connection pool.
func CountRoundTrips(c redis.UniversalClient) *Counter {
	ctr := &Counter{}
	c.AddHook(counterHook{ctr})
	return ctr
}

// Reset sets the count to zero and forgets the commands seen.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips.Store(0)
	c.dials.Store(0)
	c.commands = nil
}

// Load returns the number of round trips since the last Reset.
func (c *Counter) Load() int64 { return c.trips.Load() }

// Dials returns the number of new connections dialled since the last Reset.
func (c *Counter) Dials() int64 { return c.dials.Load() }

// Commands returns the lower-case names of the commands sent since the last
// Reset, in order, for diagnostics (e.g. ["evalsha", "get"]). A pipeline
// adds one name per command it holds, so there can be more names than round
// trips. Only the first 4096 names after a Reset are kept.
func (c *Counter) Commands() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.commands...)
}

func (c *Counter) record(cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips.Add(1)
	for _, cmd := range cmds {
		if len(c.commands) >= maxCommands {
			return
		}
		c.commands = append(c.commands, cmd.Name())
	}
}

// countedKey marks a context whose command is already being counted, so
// that the connection-setup commands go-redis issues underneath it, with
// the same context, are not counted again.
type countedKey struct{}

func counted(ctx context.Context) bool {
	return ctx != nil && ctx.Value(countedKey{}) != nil
}

func markCounted(ctx context.Context) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, countedKey{}, true)
}

type counterHook struct{ ctr *Counter }

var _ redis.Hook = counterHook{}

func (h counterHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.ctr.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (h counterHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if counted(ctx) {
			return next(ctx, cmd)
		}
		h.ctr.record(cmd)
		return next(markCounted(ctx), cmd)
	}
}

func (h counterHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if counted(ctx) {
			return next(ctx, cmds)
		}
		h.ctr.record(cmds...)
		return next(markCounted(ctx), cmds)
	}
}
