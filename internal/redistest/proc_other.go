//go:build !linux

package redistest

import "os/exec"

// startProcess starts the server. Outside Linux there is no parent-death
// signal, so a server outlives a test binary that does not call Main.
func startProcess(cmd *exec.Cmd) error { return cmd.Start() }
