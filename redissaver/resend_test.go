package redissaver_test

import (
	"bytes"
	"context"
	"github.com/graphstate/redcheck/internal/keys"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// replyDropper is a loopback TCP proxy in front of a Redis server that can
// lose one reply: armed, it lets the next request through, lets Redis run
// it, then closes the client's connection instead of forwarding the reply
// (a network fault after the server did the work). It counts the script
// calls (EVAL and EVALSHA) clients send.
type replyDropper struct {
	ln      net.Listener
	target  string
	armed   atomic.Bool
	dropped atomic.Int32
	scripts atomic.Int32

	mu    sync.Mutex
	conns []net.Conn
}

func newReplyDropper(t *testing.T, target string) *replyDropper {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyDropper{ln: ln, target: target}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.forward(c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	return p
}

func (p *replyDropper) addr() string { return p.ln.Addr().String() }

// arm makes the proxy drop the next reply from Redis, and the connection
// that would have carried it.
func (p *replyDropper) arm() { p.armed.Store(true) }

var (
	evalshaCmd = []byte("\r\nevalsha\r\n")
	evalCmd    = []byte("\r\neval\r\n")
)

func (p *replyDropper) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { // client to Redis, counting script calls
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				low := bytes.ToLower(buf[:n])
				p.scripts.Add(int32(bytes.Count(low, evalshaCmd) + bytes.Count(low, evalCmd)))
				if _, werr := up.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		_ = up.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			if p.armed.CompareAndSwap(true, false) {
				p.dropped.Add(1)
				break
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = c.Close()
	_ = up.Close()
	<-done
}

// resendSetup puts a replyDropper in front of the server of direct and
// returns a saver whose client goes through it and re-sends a command
// after a connection error (MaxRetries 2), its scripts loaded.
func resendSetup(t *testing.T, c redis.UniversalClient) (direct *redis.Client, p *replyDropper, s *redissaver.Saver) {
	t.Helper()
	direct = c.(*redis.Client)
	p = newReplyDropper(t, direct.Options().Addr)
	rdb := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: 2, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 5 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	s = newSaver(t, rdb, redissaver.Options{})
	must(t, s.LoadScripts(context.Background()))
	return direct, p, s
}

// TestNothingResentTwice: a Put or PutWrites whose reply is lost after
// Redis ran its script is sent again by go-redis (MaxRetries, on the
// connection error) on a new connection. The saver's call token makes the
// re-sent Put change nothing: the checkpoint is stored once, one event is
// published, and Put returns nil. A re-sent PutWrites of regular writes
// inserts nothing new (insert-if-absent) and publishes no second event.
func TestNothingResentTwice(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			direct, p, s := resendSetup(t, b.client(t))
			ctx := context.Background()
			events := keys.Of(s).Events("resent")

			// lossy runs call with the next reply lost, and checks that
			// go-redis sent the script twice.
			lossy := func(what string, call func() error) error {
				t.Helper()
				before := p.scripts.Load()
				p.arm()
				err := call()
				if p.dropped.Load() != 1 {
					t.Fatalf("%s: the proxy dropped %d replies, want 1", what, p.dropped.Load())
				}
				p.dropped.Store(0)
				if n := p.scripts.Load() - before; n != 2 {
					t.Errorf("%s: %d script calls sent, want 2 (the call and go-redis's retry)", what, n)
				}
				return err
			}
			xlen := func() int64 { return direct.XLen(ctx, events).Val() }

			// A new thread's first checkpoint: go-redis sends the script
			// again, and the call token makes the second run change nothing.
			root := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": 1}, ChannelVersions: map[string]string{"a": "1"}}
			if err := lossy("Put root", func() error {
				_, err := s.Put(ctx, checkpoint.Config{ThreadID: "resent"}, root, checkpoint.Metadata{"step": 0}, root.ChannelVersions)
				return err
			}); err != nil {
				t.Fatalf("Put root with its reply lost: %v", err)
			}
			cfg := checkpoint.Config{ThreadID: "resent", CheckpointID: root.ID}
			if n := xlen(); n != 1 {
				t.Errorf("events after the root Put: %d, want 1", n)
			}
			base := xlen()
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "resent"})
			if err != nil || tup.Checkpoint.ID != root.ID || tup.Checkpoint.ChannelValues["a"] != int64(1) {
				t.Fatalf("GetTuple: %+v, %v", tup, err)
			}

			// A child checkpoint, then a re-put of it (same id and parent,
			// new metadata): each stored once, one event each.
			child := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}
			for i, md := range []checkpoint.Metadata{{"step": 1}, {"step": 1, "note": "again"}} {
				if err := lossy("Put child", func() error {
					_, err := s.Put(ctx, cfg, child, md, nil)
					return err
				}); err != nil {
					t.Fatalf("Put child %d: %v", i, err)
				}
				if n := xlen(); n != base+int64(1+i) {
					t.Errorf("events after child put %d: %d, want %d", i, n, base+int64(1+i))
				}
			}
			childCfg := checkpoint.Config{ThreadID: "resent", CheckpointID: child.ID}
			tup, err = s.GetTuple(ctx, childCfg)
			if err != nil || tup.Metadata["note"] != "again" {
				t.Fatalf("child after its re-put: %+v, %v", tup, err)
			}
			var ids []string
			for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "resent"}) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, tup.Checkpoint.ID)
			}
			if len(ids) != 2 || ids[0] != child.ID || ids[1] != root.ID {
				t.Errorf("List: %v, want [%s %s]", ids, child.ID, root.ID)
			}

			// Regular writes: insert-if-absent, so the re-sent call stores
			// nothing and publishes nothing.
			if err := lossy("PutWrites", func() error {
				return s.PutWrites(ctx, childCfg, []checkpoint.Write{{Channel: "out", Value: "v1"}, {Channel: "log", Value: "v2"}}, "task", "")
			}); err != nil {
				t.Fatalf("PutWrites with its reply lost: %v", err)
			}
			if n := xlen(); n != base+3 {
				t.Errorf("events after a re-sent PutWrites: %d, want %d", n, base+3)
			}
			tup, err = s.GetTuple(ctx, childCfg)
			if err != nil || len(tup.PendingWrites) != 2 {
				t.Fatalf("pending writes: %+v, %v", tup, err)
			}
			requireSound(t, s, "resent")
		})
	}
}

// TestSpecialWritesResent: writes to special channels (__error__,
// __interrupt__, ...) overwrite, so a PutWrites of one that go-redis
// re-sends after a lost reply runs twice and publishes a second "writes"
// event for the one call; the stored write is the same. The call token
// that makes Put idempotent is missing from PutWrites.
func TestSpecialWritesResent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			direct, p, s := resendSetup(t, b.client(t))
			ctx := context.Background()
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "special"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.arm()
			err = s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: checkpoint.ErrorChannel, Value: "boom"}}, "task", "")
			if err != nil || p.dropped.Load() != 1 {
				t.Fatalf("PutWrites: %v, %d replies dropped", err, p.dropped.Load())
			}
			if n := direct.XLen(ctx, keys.Of(s).Events("special")).Val(); n != 2 {
				t.Errorf("events after one Put and one PutWrites re-sent: %d, want 2", n)
			}
		})
	}
}
