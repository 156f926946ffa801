package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server the harness started, on a free loopback port
// without persistence, in a temporary directory.
type redisServer struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts redis-server on a free loopback port and waits (at most
// 10 s) until it answers PING. The harness's own small version of
// internal/redistest's server, which imports "testing".
func startRedis(ctx context.Context) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL is unset and redis-server is not on PATH (Debian: apt-get install redis-server): %w", err)
	}
	var lastErr error
	for range 5 { // the free port may be taken before the server binds it
		srv, err := launchRedis(ctx, bin)
		if err == nil {
			return srv, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launchRedis(ctx context.Context, bin string) (*redisServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir, err := os.MkdirTemp("", "redcheck-bench-")
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "redis-server.log"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	srv := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(srv.done)
	}()
	client := redis.NewClient(&redis.Options{Addr: srv.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer func() { _ = client.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-srv.done:
			log, _ := os.ReadFile(filepath.Join(dir, "redis-server.log"))
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("redis-server exited during startup: %s", log)
		case <-ctx.Done():
			srv.stop()
			return nil, ctx.Err()
		default:
		}
		if client.Ping(ctx).Err() == nil {
			return srv, nil
		}
		if time.Now().After(deadline) {
			srv.stop()
			return nil, fmt.Errorf("redis-server on %s not ready after 10s", srv.addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server (SIGTERM, then SIGKILL after 5 s) and removes its
// directory.
func (s *redisServer) stop() {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	_ = os.RemoveAll(s.dir)
}
