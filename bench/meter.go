package main

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// meter counts what a go-redis client puts on the wire: bytes written and
// read at the net.Conn level (through its Dialer), and round trips (through a
// hook: one per command sent alone, one per pipeline or transaction). Unlike
// internal/redistest's Counter (for tests), it counts bytes, and it counts
// round trips without marking each command's context, which would cost an
// allocation per command and show in the harness's allocs per op.
type meter struct {
	sent, recv, trips atomic.Int64

	// names are the commands the client sent (lowercase, as go-redis names
	// them) since the last takeNames: the commands whose server time
	// (INFO commandstats) a pass is charged. Commands a script runs are
	// counted by Redis under their own names too; only the top-level ones
	// are the client's.
	mu     sync.Mutex
	names  map[string]struct{}
	inside map[string]int64
}

// sentName records that the client sent a command called name.
func (m *meter) sentName(name string) {
	m.mu.Lock()
	if m.names == nil {
		m.names = map[string]struct{}{}
	}
	if _, ok := m.names[name]; !ok {
		m.names[name] = struct{}{}
	}
	m.mu.Unlock()
}

// sentInside records that the client sent a command called name inside a
// transaction.
func (m *meter) sentInside(name string) {
	m.mu.Lock()
	if m.inside == nil {
		m.inside = map[string]int64{}
	}
	m.inside[name]++
	m.mu.Unlock()
}

// takeNames returns the names recorded since the last call, and the number
// of calls of each command sent inside transactions, and forgets them.
func (m *meter) takeNames() (map[string]struct{}, map[string]int64) {
	if m == nil {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, in := m.names, m.inside
	m.names, m.inside = nil, nil
	return n, in
}

// usage is a snapshot of a meter.
type usage struct{ sent, recv, trips int64 }

func (m *meter) load() usage {
	if m == nil {
		return usage{}
	}
	return usage{m.sent.Load(), m.recv.Load(), m.trips.Load()}
}

func (u usage) minus(v usage) usage {
	return usage{u.sent - v.sent, u.recv - v.recv, u.trips - v.trips}
}

// newClient returns a client for opt whose traffic m counts. poolSize is
// the most connections it opens (the highest concurrency it serves, so that
// no goroutine waits for a connection).
func newClient(opt redis.Options, poolSize int, m *meter) *redis.Client {
	o := opt
	o.PoolSize = max(poolSize, 10)
	o.ReadTimeout = 30 * time.Second // a 1 MB value on a loaded machine
	o.WriteTimeout = 30 * time.Second
	tlsConf := o.TLSConfig
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 5 * time.Minute}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		var c net.Conn = &countingConn{Conn: conn, m: m}
		if tlsConf != nil {
			c = tls.Client(c, tlsConf) // count the bytes as they travel
		}
		return c, nil
	}
	c := redis.NewClient(&o)
	c.AddHook(tripHook{m})
	return c
}

// countingConn counts the bytes read and written through a connection.
type countingConn struct {
	net.Conn
	m *meter
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.m.recv.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.m.sent.Add(int64(n))
	return n, err
}

// tripHook counts round trips. The commands go-redis sends by itself when
// it opens a connection (HELLO, AUTH, SELECT, CLIENT SETINFO) are setup, not
// the cost of an operation, and are not counted. (redistest's Counter marks
// the context instead; that costs an allocation per command, which would
// show in allocs per op.)
type tripHook struct{ m *meter }

func (h tripHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h tripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !isSetup(cmd) {
			h.m.trips.Add(1)
			h.m.sentName(cmd.Name())
			if c, ok := ctx.Value(captureKey{}).(*capture); ok {
				c.add([]redis.Cmder{cmd}, false)
			}
		}
		return next(ctx, cmd)
	}
}

func (h tripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && !isSetup(cmds[0]) {
			h.m.trips.Add(1)
			if cmds[0].Name() == "multi" {
				// A transaction: Redis counts EXEC's time with the commands
				// it runs inside, and those under their own names as well:
				// MULTI and EXEC are charged, the others are recorded as
				// inside one (see serverTime).
				h.m.sentName("multi")
				h.m.sentName("exec")
				for _, cmd := range cmds[1 : len(cmds)-1] {
					h.m.sentInside(cmd.Name())
				}
			} else {
				for _, cmd := range cmds {
					h.m.sentName(cmd.Name())
				}
			}
			if c, ok := ctx.Value(captureKey{}).(*capture); ok {
				c.add(cmds, true)
			}
		}
		return next(ctx, cmds)
	}
}

// isSetup reports whether cmd is one go-redis sends while opening a
// connection.
func isSetup(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "select", "client", "readonly":
		return true
	}
	return false
}
