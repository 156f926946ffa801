package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// startTimeout bounds the wait for a new server to answer PING.
	startTimeout = 10 * time.Second
	// stopTimeout bounds the wait after SIGTERM before the server is killed.
	stopTimeout = 5 * time.Second
	// portAttempts is how many free ports are tried when the chosen one was
	// taken between picking it and the server binding it.
	portAttempts = 5
	// logName is the file in the server's directory that gets its output.
	logName = "redis-server.log"
)

// server is one redis-server process started by this package.
type server struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
}

// requireRedisServer returns the path of redis-server, or skips the test
// when it is not installed: fails it instead when CI is set. why completes
// the message ("REDIS_URL is unset", ...).
func requireRedisServer(t testing.TB, why string) string {
	t.Helper()
	return requireBinary(t, "redis-server", why)
}

// requireBinary is requireRedisServer for any program of Debian's
// redis-server and redis-tools packages (redis-server, redis-cli).
func requireBinary(t testing.TB, name, why string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err == nil {
		return bin
	}
	msg := "redistest: " + name + " is not on PATH and " + why +
		"; install it (Debian: apt-get install redis-server) to run the real-Redis tier"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set, so this is an error)")
	}
	t.Skip(msg)
	return ""
}

// startServer starts redis-server on a free loopback port with the
// package's standard arguments followed by extraArgs, and waits until it
// answers. It is used both for the shared server and by StartServer.
func startServer(bin string, extraArgs []string) (*server, error) {
	var err error
	for range portAttempts {
		var srv *server
		srv, err = startOnce(bin, extraArgs)
		if err == nil {
			return srv, nil
		}
		if !errors.Is(err, errPortTaken) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no free port after %d attempts: %w", portAttempts, err)
}

var errPortTaken = errors.New("port already in use")

func startOnce(bin string, extraArgs []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	srv, err := launch(bin, port, dir, extraArgs)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return srv, nil
}

// launch starts redis-server on port with dir as its working and data
// directory, and waits until it answers. It truncates the log in dir, and
// leaves dir in place when it fails (startOnce removes a directory it
// made; a restart keeps the data it holds).
func launch(bin string, port int, dir string, extraArgs []string) (*server, error) {
	logf, err := os.Create(filepath.Join(dir, logName))
	if err != nil {
		return nil, err
	}
	defer func() { _ = logf.Close() }() // the child keeps its own copy

	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
	}
	args = append(args, extraArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// Output goes to a file, not a pipe: no copying goroutines, and Wait
	// does not hang on a forked child (BGSAVE) that inherited the pipe.
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := startProcess(cmd); err != nil {
		return nil, err
	}
	srv := &server{
		addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		dir:  dir,
		cmd:  cmd,
		done: make(chan struct{}),
	}
	go func() {
		_ = cmd.Wait()
		close(srv.done)
	}()

	if err := srv.waitReady(startTimeout); err != nil {
		srv.kill()
		return nil, err
	}
	return srv, nil
}

// waitReady waits until the server's log says it accepts connections and
// its port answers PING. Both are needed: the log proves that this process
// bound the port (another test binary's server could otherwise have taken
// it and be the one answering), and PING proves it serves.
func (s *server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-s.done:
			log := s.log()
			if strings.Contains(log, "Address already in use") {
				return fmt.Errorf("%w: %s", errPortTaken, s.addr)
			}
			return fmt.Errorf("redis-server exited during startup (%v); its output:\n%s", s.cmd.ProcessState, log)
		default:
		}
		if strings.Contains(strings.ToLower(s.log()), "ready to accept connections") && ping(s.addr) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready after %v (it must log to stdout at notice level and answer PING on its --port); its output:\n%s", s.addr, timeout, s.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends an inline PING and accepts any RESP reply: "+PONG", or an
// error such as -NOAUTH from a server that requires authentication.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line == "" || (line[0] != '+' && line[0] != '-') {
		return fmt.Errorf("unexpected PING reply %q", line)
	}
	return nil
}

// stop ends the server: SIGTERM, a bounded wait, then SIGKILL. It removes
// the server's directory. Calling it more than once is harmless.
func (s *server) stop() {
	select {
	case <-s.done:
	default:
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			_ = s.cmd.Process.Kill() // no SIGTERM here (Windows)
		}
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	_ = os.RemoveAll(s.dir)
}

// kill ends the server at once with SIGKILL, as a crash would, and waits
// for it to exit. Unlike stop it keeps the server's directory, so that the
// server can be started again on its data. Killing a server that has
// exited already is harmless.
func (s *server) kill() {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// log returns what the server has written so far.
func (s *server) log() string {
	b, err := os.ReadFile(filepath.Join(s.dir, logName))
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	return string(bytes.TrimSpace(b))
}

// freePort asks the kernel for a free loopback port. The port is released
// before it is returned, so a caller may lose it to someone else: startServer
// retries with a new port when that happens.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, err
	}
	return port, nil
}
