package redisserver_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/redis/go-redis/v9"
)

func redisServerBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not on PATH (CI is set, so this is an error)")
		}
		t.Skip("redis-server is not on PATH")
	}
	return bin
}

// TestStartStopAndServerTime starts a server, runs a script on it, reads the
// server-time figures, and stops it.
func TestStartStopAndServerTime(t *testing.T) {
	srv, err := redisserver.Start(redisServerBin(t), []string{"--maxmemory", "64mb"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer func() { _ = rdb.Close() }()
	if got := rdb.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; got != "67108864" {
		t.Errorf("extra argument not applied: maxmemory %q", got)
	}
	calls0, _ := redisserver.ScriptStats(rdb)
	for range 3 {
		if err := rdb.Eval(ctx, "return 1", nil).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if calls, usecs := redisserver.ScriptStats(rdb); calls != calls0+3 || usecs < 0 {
		t.Errorf("ScriptStats = %d calls, %d µs; want %d calls", calls, usecs, calls0+3)
	}
	// A command run by a script is counted under its own name too.
	if err := rdb.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"k"}).Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	if stats, err := redisserver.CommandStats(rdb); err != nil || stats["eval"].Calls != calls0+4 || stats["get"].Calls != 1 {
		t.Errorf("CommandStats = %v, %v; want eval %d calls, get 1", stats, err, calls0+4)
	}
	if cpu := redisserver.MainThreadCPU(rdb); cpu <= 0 {
		t.Errorf("MainThreadCPU = %v, want > 0", cpu)
	}
	if srv.Log() == "" {
		t.Error("empty server log")
	}
	srv.Stop()
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Error("server answers after Stop")
	}
	if _, err := os.Stat(srv.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s left after Stop: %v", srv.Dir(), err)
	}
	srv.Stop() // harmless
}

// TestLaunchOnTakenPort reports ErrPortTaken when another server holds the
// port.
func TestLaunchOnTakenPort(t *testing.T) {
	bin := redisServerBin(t)
	srv, err := redisserver.Start(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	_, port, _ := splitPort(srv.Addr())
	other, err := redisserver.Launch(bin, port, t.TempDir(), nil)
	if err == nil {
		other.Stop()
		t.Fatal("a second server started on a taken port")
	}
	if !errors.Is(err, redisserver.ErrPortTaken) {
		t.Errorf("err = %v, want ErrPortTaken", err)
	}
}

func splitPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	return host, port, err
}
