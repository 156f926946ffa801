package redistest

import (
	"os"
	"os/exec"
	"testing"
)

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
