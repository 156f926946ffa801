package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redisserver"
)

// RestartableServer is a dedicated redis-server that a test can crash with
// SIGKILL and start again on the same port and data directory; see
// [StartRestartableServer]. Its methods are safe for concurrent use.
type RestartableServer struct {
	bin  string
	args []string
	port int
	addr string
	dir  string

	mu       sync.Mutex
	srv      *redisserver.Server // nil while killed
	restarts int
}

// StartRestartableServer starts a dedicated redis-server for this test, like
// [StartServer], but durable: it runs with --appendonly yes and
// --appendfsync always, so every write it acknowledged is on disk, and it
// can be killed ([RestartableServer.Kill]) and started again
// ([RestartableServer.Restart]) on the same port and directory, reloading
// its append-only file. extraArgs are appended after those, so they can
// override them. The server is stopped and its directory removed when the
// test ends.
//
// Without redis-server on PATH the test is skipped, or failed when CI is set.
func StartRestartableServer(t testing.TB, extraArgs ...string) *RestartableServer {
	t.Helper()
	bin := requireRedisServer(t, "StartRestartableServer always runs its own local server")
	args := append([]string{"--appendonly", "yes", "--appendfsync", "always"}, extraArgs...)
	srv, err := redisserver.Start(bin, args)
	if err != nil {
		t.Fatalf("redistest: starting a restartable redis-server %q: %v", extraArgs, err)
	}
	_, portStr, _ := net.SplitHostPort(srv.Addr())
	port, _ := strconv.Atoi(portStr)
	r := &RestartableServer{bin: bin, args: args, port: port, addr: srv.Addr(), dir: srv.Dir(), srv: srv}
	t.Cleanup(r.stop)
	return r
}

// Addr returns the server's address, "127.0.0.1:PORT"; it does not change
// across restarts.
func (r *RestartableServer) Addr() string { return r.addr }

// Dir returns the server's data directory (it holds the append-only files
// and the log, redis-server.log).
func (r *RestartableServer) Dir() string { return r.dir }

// Restarts returns how many times Restart has started the server again.
func (r *RestartableServer) Restarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarts
}

// Kill sends SIGKILL to the server, as a crash or a power cut would, and
// waits until the process is gone. Killing a killed server is harmless.
func (r *RestartableServer) Kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		r.srv.Kill()
		r.srv = nil
	}
}

// errRestartRunning is returned by Restart when the server was not killed.
var errRestartRunning = errors.New("redistest: Restart of a server that is running (Kill it first)")

// Restart starts the killed server again, with the same arguments, port and
// directory, and waits until it has loaded its data and answers PING. The
// log of the previous run is kept as redis-server.log.N. It retries for a
// few seconds while another process holds the port.
func (r *RestartableServer) Restart() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		return errRestartRunning
	}
	old := filepath.Join(r.dir, redisserver.LogName)
	_ = os.Rename(old, old+"."+strconv.Itoa(r.restarts))
	var err error
	for attempt := range redisserver.PortAttempts * 4 {
		if attempt > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		var srv *redisserver.Server
		srv, err = redisserver.Launch(r.bin, r.port, r.dir, r.args)
		if err == nil {
			r.srv = srv
			r.restarts++
			return nil
		}
		if !errors.Is(err, redisserver.ErrPortTaken) {
			break
		}
	}
	return fmt.Errorf("redistest: restarting redis-server on %s: %w", r.addr, err)
}

// stop ends the server for good and removes its directory.
func (r *RestartableServer) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		r.srv.Stop() // removes the directory
		r.srv = nil
		return
	}
	_ = os.RemoveAll(r.dir)
}
