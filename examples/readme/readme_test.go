package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestQuickstartRuns runs the README's quickstart on a real Redis and
// checks what it prints: the latest state, then the history newest first,
// the task's write stored against the first checkpoint.
func TestQuickstartRuns(t *testing.T) {
	rdb := redistest.Real(t)
	out, err := captureStdout(t, func() error {
		return quickstart(context.Background(), rdb, redistest.Prefix(t))
	})
	if err != nil {
		t.Fatalf("quickstart: %v\noutput:\n%s", err, out)
	}
	want := "latest: [hi hello]\n" +
		"step 0: [hi hello], 0 pending write(s)\n" +
		"step -1: [hi], 1 pending write(s)\n"
	if out != want {
		t.Errorf("quickstart printed\n%s\nwant\n%s", out, want)
	}
}

// TestReadmeGoBlockIsMain: the README's ```go block is, byte for byte, the
// code of main.go between the README:begin and README:end lines, so that
// the README shows code that compiles and that TestQuickstartRuns runs.
func TestReadmeGoBlockIsMain(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	block := fenced(t, string(readme), "```go\n")
	region := marked(t, string(src), "// README:begin\n", "// README:end\n")
	if block != region {
		t.Errorf("the README's ```go block differs from main.go's README region: copy the region into the README\n--- README block:\n%s\n--- main.go region:\n%s", block, region)
	}
	if n := strings.Count(string(readme), "```go\n"); n != 1 {
		t.Errorf("the README has %d ```go blocks, want 1 (only the one checked here)", n)
	}
}

// fenced returns the body of the first code block of doc that opens with
// the line open, without its fences.
func fenced(t *testing.T, doc, open string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+open)
	if !ok {
		t.Fatalf("no %q block", strings.TrimSpace(open))
	}
	body, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatalf("unterminated %q block", strings.TrimSpace(open))
	}
	return body + "\n"
}

// marked returns the lines of src strictly between the line begin and the
// line end, without trailing blank lines.
func marked(t *testing.T, src, begin, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(src, "\n"+begin)
	if !ok {
		t.Fatalf("no %q line", strings.TrimSpace(begin))
	}
	region, _, ok := strings.Cut(rest, "\n"+end)
	if !ok {
		t.Fatalf("no %q line after %q", strings.TrimSpace(end), strings.TrimSpace(begin))
	}
	return strings.TrimRight(region, "\n") + "\n"
}

// captureStdout returns what f prints to os.Stdout, and f's error.
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	read := make(chan []byte)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		read <- b.Bytes()
	}()
	ferr := f()
	os.Stdout = saved
	_ = w.Close()
	out := <-read
	_ = r.Close()
	return string(out), ferr
}
