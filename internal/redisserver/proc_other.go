//go:build !linux

package redisserver

import "os/exec"

// startProcess starts the server. Outside Linux there is no parent-death
// signal, so a server outlives a program that does not stop it.
func startProcess(cmd *exec.Cmd) error { return cmd.Start() }
