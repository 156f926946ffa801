package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRefreshCopy: an installed copy that differs from its source in any
// file (changed, added, removed) is made the same again; one that is the same
// is left alone.
func TestRefreshCopy(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write := func(root, name, content string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"dist", "package.json"}
	write(src, "dist/a.js", "new a")
	write(src, "dist/sub/b.js", "b")
	write(src, "package.json", "{}")
	write(src, "src/ignored.ts", "not part of the package")
	write(dst, "dist/a.js", "old a")
	write(dst, "dist/stale.js", "gone from the source")
	write(dst, "package.json", "{}")

	copied, err := refreshCopy(src, dst, names)
	if err != nil || !copied {
		t.Fatalf("refreshCopy = %v, %v; want a copy", copied, err)
	}
	if same, err := sameTrees(src, dst, names); err != nil || !same {
		t.Fatalf("after the copy: same = %v, %v", same, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "dist/stale.js")); !os.IsNotExist(err) {
		t.Errorf("a file gone from the source is still in the copy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "src")); !os.IsNotExist(err) {
		t.Errorf("a file outside the package was copied: %v", err)
	}
	if copied, err := refreshCopy(src, dst, names); err != nil || copied {
		t.Errorf("refreshCopy of an identical copy = %v, %v; want nothing done", copied, err)
	}
}
