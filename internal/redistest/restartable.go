package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	fix  string // redis-check-aof, "" when there is none
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
// A crash can cut the append-only file in the middle of a transaction (every
// script that writes twice is one). Redis 7's own repair at load
// (aof-load-truncated yes) then truncates inside the transaction and leaves
// a MULTI without its EXEC, which makes a later load lose or half-apply
// writes (fixed in Valkey, valkey-io/valkey#4342). So when redis-check-aof
// sits beside redis-server, the server runs with aof-load-truncated no and
// Restart repairs the file with redis-check-aof --fix first, which cuts
// before the MULTI.
//
// Without redis-server on PATH the test is skipped, or failed when CI is set.
func StartRestartableServer(t testing.TB, extraArgs ...string) *RestartableServer {
	t.Helper()
	bin := requireRedisServer(t, "StartRestartableServer always runs its own local server")
	args := []string{"--appendonly", "yes", "--appendfsync", "always"}
	fix, err := exec.LookPath(filepath.Join(filepath.Dir(bin), "redis-check-aof"))
	if err == nil {
		args = append(args, "--aof-load-truncated", "no")
	} else {
		fix = ""
	}
	args = append(args, extraArgs...)
	srv, err := redisserver.Start(bin, args)
	if err != nil {
		t.Fatalf("redistest: starting a restartable redis-server %q: %v", extraArgs, err)
	}
	_, portStr, _ := net.SplitHostPort(srv.Addr())
	port, _ := strconv.Atoi(portStr)
	r := &RestartableServer{bin: bin, fix: fix, args: args, port: port, addr: srv.Addr(), dir: srv.Dir(), srv: srv}
	t.Cleanup(r.stop)
	return r
}

// Addr returns the server's address, "127.0.0.1:PORT"; it does not change
// across restarts.
func (r *RestartableServer) Addr() string { return r.addr }

// Dir returns the server's data directory (it holds the append-only files
// and the log, redis-server.log).
func (r *RestartableServer) Dir() string { return r.dir }

// Died reports how a server that was not killed by Kill ended ("signal:
// killed", "exit status 1"), or "" while it runs (or after Kill).
func (r *RestartableServer) Died() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv == nil {
		return ""
	}
	return r.srv.Exited()
}

// Forget marks a server that died by itself as killed, so that Restart
// starts it again.
func (r *RestartableServer) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil && r.srv.Exited() != "" {
		r.srv = nil
	}
}

// LogTail returns the last n lines of the server's current log (its run
// since the last Restart), to show why it stopped answering.
func (r *RestartableServer) LogTail(n int) string {
	b, err := os.ReadFile(filepath.Join(r.dir, redisserver.LogName))
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

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
	if err := r.repairAOF(); err != nil {
		return err
	}
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

// repairAOF cuts an incomplete command or transaction off the end of the
// append-only file with redis-check-aof --fix, when there is one and a file.
func (r *RestartableServer) repairAOF() error {
	if r.fix == "" {
		return nil
	}
	file := filepath.Join(r.dir, "appendonlydir", "appendonly.aof.manifest") // Redis 7
	if !fileExists(file) {
		if file = filepath.Join(r.dir, "appendonly.aof"); !fileExists(file) {
			return nil
		}
	}
	cmd := exec.Command(r.fix, "--fix", file)
	cmd.Stdin = strings.NewReader("y\n") // it asks before it truncates
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("redistest: redis-check-aof --fix %s: %w\n%s", file, err, out)
	}
	return nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
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
