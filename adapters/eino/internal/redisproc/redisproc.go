// Package redisproc starts a throwaway redis-server for the tests of this
// module (the root module's internal/redistest is internal to it, and not
// importable from here).
package redisproc

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	// Addr is its loopback address, "127.0.0.1:PORT".
	Addr string
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
}

// Require returns the path of redis-server, or skips the test when it is not
// on PATH: fails it instead when CI is set, so that CI never passes without
// the real-Redis tier.
func Require(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		return bin
	}
	msg := "redis-server is not on PATH and REDIS_URL is unset; install it (Debian: apt-get install redis-server) to run the real-Redis tier"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set, so this is an error)")
	}
	t.Skip(msg)
	return ""
}

// Start starts bin (redis-server) on a free loopback port, without
// persistence, in a temporary directory, and waits until it answers PING.
// Redis 7 needs an explicit port: the helper takes one the kernel hands out
// for ":0", closes it and gives it to the server, and tries again with
// another when the server cannot bind it.
func Start(bin string) (*Server, error) {
	var last error
	for range 5 {
		srv, err := start(bin)
		if err == nil {
			return srv, nil
		}
		last = err
	}
	return nil, last
}

func start(bin string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir, err := os.MkdirTemp("", "redcheck-eino-redis-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
	out, err := cmd.StdoutPipe()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	srv := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, dir: dir, done: make(chan struct{})}
	// The log, kept for an error message until the server is up, then
	// drained so that the server never blocks on a full pipe.
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	go func() {
		_ = cmd.Wait()
		close(srv.done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-srv.done:
			srv.cleanup()
			return nil, fmt.Errorf("redis-server on port %d exited: %s", port, drain(lines))
		default:
		}
		if ping(srv.Addr) == nil {
			go func() {
				for range lines {
				}
			}()
			return srv, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Stop()
	return nil, fmt.Errorf("redis-server on port %d did not answer PING within 10s: %s", port, drain(lines))
}

// ping sends PING in the inline protocol and reads one reply line.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return errors.New("PING answered " + strings.TrimSpace(line))
	}
	return nil
}

func drain(lines <-chan string) string {
	var b strings.Builder
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return b.String()
			}
			b.WriteString(l + "\n")
		case <-time.After(100 * time.Millisecond):
			return b.String()
		}
	}
}

// Stop kills the server, waits for it and removes its directory.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cleanup()
}

func (s *Server) cleanup() { _ = os.RemoveAll(s.dir) }
