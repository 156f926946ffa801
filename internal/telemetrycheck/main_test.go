package telemetrycheck

import (
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
