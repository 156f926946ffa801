package telemetrycheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoSDKDependency: the library packages import OpenTelemetry's API
// only; the SDK and the exporters are for tests and examples.
func TestNoSDKDependency(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/graphstate/redcheck/redissaver", "github.com/graphstate/redcheck/stream",
		"github.com/graphstate/redcheck/redisstore", "github.com/graphstate/redcheck/checkpoint").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	api := 0
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(pkg, "go.opentelemetry.io/otel/sdk"), strings.HasPrefix(pkg, "go.opentelemetry.io/otel/exporters"):
			t.Errorf("a library package depends on %s", pkg)
		case strings.HasPrefix(pkg, "go.opentelemetry.io/otel"):
			api++
		}
	}
	if api == 0 {
		t.Error("no OpenTelemetry API package among the dependencies: the list is not what it seems")
	}
}
