package scripts_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/internal/scripts"
)

// TestLinkedUpToDate: linked/ (what the TypeScript build copies into js/lua)
// holds exactly scripts.Source of each of SaverScripts, byte for byte.
func TestLinkedUpToDate(t *testing.T) {
	const fix = "run `go generate ./internal/scripts` and commit internal/scripts/linked"
	files, err := filepath.Glob(filepath.Join("linked", "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, f := range files {
		have = append(have, filepath.Base(f))
	}
	want := slices.Sorted(slices.Values(scripts.SaverScripts()))
	if !slices.Equal(have, want) {
		t.Errorf("linked/ holds %v, want %v: %s", have, want, fix)
	}
	for _, name := range want {
		got, err := os.ReadFile(filepath.Join("linked", name))
		if err != nil {
			t.Errorf("%v: %s", err, fix)
			continue
		}
		src, err := scripts.Source(name)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != src {
			t.Errorf("linked/%s is stale (%d bytes, scripts.Source gives %d): %s", name, len(got), len(src), fix)
		}
	}
}
