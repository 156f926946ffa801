package readme

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// usagePrelude and usageEnd wrap the README's usage block into a function
// that compiles: the block declares its variables and returns on errors.
const usagePrelude = `package readme

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// The block may use these packages, or not.
var _, _, _ = errors.Is, log.Print, time.Now

func usage(ctx context.Context) error {
`

const usageEnd = `
	_, _, _ = saver, sub, err
	return nil
}
`

// usageBlock returns the first ```go block after "## Usage" in readme.
func usageBlock(t *testing.T, readme string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n## Usage\n")
	if !ok {
		t.Fatal("README has no ## Usage section")
	}
	_, rest, ok = strings.Cut(rest, "```go\n")
	if !ok {
		t.Fatal("the usage section has no ```go block")
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("unterminated ```go block")
	}
	return block
}

// TestUsageCompiles builds this package with the README's usage block added
// as a file (through the go command's -overlay, so nothing is written into
// the tree).
func TestUsageCompiles(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src := usagePrelude + usageBlock(t, string(readme)) + usageEnd
	dir := t.TempDir()
	gen := filepath.Join(dir, "usage.go")
	if err := os.WriteFile(gen, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs("usage_readme.go") // does not exist: the overlay adds it
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{here: gen}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCommand(), "build", "-overlay", overlayFile, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's usage block does not compile: %v\n%s\n--- generated file:\n%s", err, out, src)
	}
}

// goCommand is the go command of the toolchain running the test.
func goCommand() string {
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}
