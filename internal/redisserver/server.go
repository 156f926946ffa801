// Package redisserver starts and stops local redis-server processes on free
// loopback ports: the launcher behind internal/redistest (tests) and the
// benchmark harness (bench), in a package that does not import "testing",
// so that a program can use it. It also reads the server-time figures Redis
// reports (ScriptStats, MainThreadCPU).
package redisserver

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
	"time"
)

const (
	// startTimeout bounds the wait for a new server to answer PING.
	startTimeout = 10 * time.Second
	// stopTimeout bounds the wait after SIGTERM before the server is killed.
	stopTimeout = 5 * time.Second
	// PortAttempts is how many free ports Start tries when the chosen one
	// was taken between picking it and the server binding it.
	PortAttempts = 5
	// LogName is the file in the server's directory that gets its output.
	LogName = "redis-server.log"
)

// Server is one redis-server process started by this package.
type Server struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
}

// Addr returns the server's address, "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.addr }

// Dir returns the server's working and data directory (it holds LogName).
func (s *Server) Dir() string { return s.dir }

// Start starts redis-server (the binary bin) on a free loopback port, in a
// new temporary directory, without persistence, with extraArgs after the
// standard arguments, and waits until it answers. Stop ends it and removes
// the directory. On Linux the server gets SIGKILL when the program that
// started it dies.
func Start(bin string, extraArgs []string) (*Server, error) {
	var err error
	for range PortAttempts {
		var srv *Server
		srv, err = startOnce(bin, extraArgs)
		if err == nil {
			return srv, nil
		}
		if !errors.Is(err, ErrPortTaken) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no free port after %d attempts: %w", PortAttempts, err)
}

// ErrPortTaken is wrapped by the error of Launch when another process holds
// the port.
var ErrPortTaken = errors.New("port already in use")

func startOnce(bin string, extraArgs []string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	srv, err := Launch(bin, port, dir, extraArgs)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return srv, nil
}

// Launch starts redis-server on port with dir as its working and data
// directory, and waits until it answers. It truncates the log in dir, and
// leaves dir in place when it fails (Start removes a directory it made; a
// restart keeps the data it holds). An error wrapping ErrPortTaken means
// another process holds the port.
func Launch(bin string, port int, dir string, extraArgs []string) (*Server, error) {
	logf, err := os.Create(filepath.Join(dir, LogName))
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
	srv := &Server{
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
		srv.Kill()
		return nil, err
	}
	return srv, nil
}

// waitReady waits until the server's log says it accepts connections and
// its port answers PING. Both are needed: the log proves that this process
// bound the port (another test binary's server could otherwise have taken
// it and be the one answering), and PING proves it serves.
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-s.done:
			log := s.Log()
			if strings.Contains(log, "Address already in use") {
				return fmt.Errorf("%w: %s", ErrPortTaken, s.addr)
			}
			return fmt.Errorf("redis-server exited during startup (%v); its output:\n%s", s.cmd.ProcessState, log)
		default:
		}
		if strings.Contains(strings.ToLower(s.Log()), "ready to accept connections") && ping(s.addr) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready after %v (it must log to stdout at notice level and answer PING on its --port); its output:\n%s", s.addr, timeout, s.Log())
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

// Stop ends the server: SIGTERM, a bounded wait, then SIGKILL. It removes
// the server's directory. Calling it more than once is harmless.
func (s *Server) Stop() {
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

// Kill ends the server at once with SIGKILL, as a crash would, and waits
// for it to exit. Unlike Stop it keeps the server's directory, so that the
// server can be started again on its data. Killing a server that has
// exited already is harmless.
func (s *Server) Kill() {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Exited reports how the process ended ("signal: killed", "exit status
// 1"), or "" while it runs.
func (s *Server) Exited() string {
	select {
	case <-s.done:
		return s.cmd.ProcessState.String()
	default:
		return ""
	}
}

// Log returns what the server has written so far.
func (s *Server) Log() string {
	b, err := os.ReadFile(filepath.Join(s.dir, LogName))
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	return string(bytes.TrimSpace(b))
}

// freePort asks the kernel for a free loopback port. The port is released
// before it is returned, so a caller may lose it to someone else: Start
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
