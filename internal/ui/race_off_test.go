//go:build !race

package ui

// raceEnabled: the test binary runs with the race detector.
const raceEnabled = false
