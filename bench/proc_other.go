//go:build !linux

package main

import "os/exec"

// setParentDeathSignal does nothing outside Linux: the harness stops its
// server on exit.
func setParentDeathSignal(*exec.Cmd) {}
