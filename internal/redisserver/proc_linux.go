//go:build linux

package redisserver

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Servers are started with Pdeathsig=SIGKILL so that they die with the test
// binary (or program) even when it does not stop them, panics or is killed.
//
// Linux sends the parent-death signal when the *thread* that forked the child
// exits, not the process. A Go thread can exit while the process lives on
// (when a goroutine locked to it returns), so all servers are forked from
// one goroutine locked to its own thread that never returns: its thread
// lives exactly as long as the test binary.

type spawnRequest struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnRequest
)

func startProcess(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnRequest)
		go spawner()
	})
	errc := make(chan error, 1)
	spawnCh <- spawnRequest{cmd: cmd, errc: errc}
	return <-errc
}

func spawner() {
	runtime.LockOSThread() // never unlocked, and this goroutine never returns
	for req := range spawnCh {
		req.errc <- req.cmd.Start()
	}
}
