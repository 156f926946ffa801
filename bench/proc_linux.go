//go:build linux

package main

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the server die with the harness even if the
// harness is killed. (Linux sends it when the forking thread exits; the
// server is only started once, early, from main's goroutine, and is stopped
// explicitly on every normal exit.)
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
