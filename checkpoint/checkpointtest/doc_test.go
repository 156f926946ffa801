package checkpointtest_test

import (
	"os"
	"strings"
	"testing"
)

// TestDocSnippetsCompile checks that the code blocks of the package
// documentation are quoted verbatim from files that compile and run: the
// first from memsaver's conformance test, the second from this package's
// tests.
func TestDocSnippetsCompile(t *testing.T) {
	doc := read(t, "doc.go")
	blocks := docBlocks(doc)
	if len(blocks) < 2 {
		t.Fatalf("doc.go has %d code blocks, want at least 2", len(blocks))
	}
	sources := []string{"../memsaver/memsaver_test.go", "run_test.go"}
	for i, src := range sources {
		code := read(t, src)
		if !strings.Contains(code, blocks[i]) {
			t.Errorf("doc.go code block %d is not in %s:\n%s", i+1, src, blocks[i])
		}
	}
}

// docBlocks returns the code blocks of a doc comment (lines "//\t..."),
// with the comment marker and one tab removed.
func docBlocks(src string) []string {
	var blocks []string
	var cur []string
	for _, line := range strings.Split(src, "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			cur = append(cur, code)
			continue
		}
		if cur != nil {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	return blocks
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
