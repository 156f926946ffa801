package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graphstate/redcheck/adapters/eino/internal/redisproc"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// The test binary is also the example's binary: run with exampleEnv set,
// it runs main (so that each run of the example is a process of its own).
const exampleEnv = "REDCHECK_EINO_EXAMPLE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(exampleEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestExample runs the example as its README says, on a real Redis: a
// first process interrupts for approval and exits; `redcheck tail`,
// started before it, prints its checkpoint event as it arrives; a second
// process resumes the run from Redis to completion and deletes the ID,
// which tail prints too; nothing of the run is left in Redis, and resuming
// it again fails instead of starting over.
func TestExample(t *testing.T) {
	url := realURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "eino-example-test-" + hex.EncodeToString(b[:])
	const id = "order-1001"

	// redcheck tail, built from the root module (the replace in go.mod).
	redcheck := filepath.Join(t.TempDir(), "redcheck")
	build := exec.CommandContext(ctx, goTool(), "build", "-o", redcheck, "github.com/graphstate/redcheck/cmd/redcheck")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build redcheck: %v\n%s", err, out)
	}
	tail := exec.CommandContext(ctx, redcheck, "tail", "--url", url, "--prefix", prefix, "--thread", id, "--from", "beginning", "--json")
	var tailErr bytes.Buffer
	tail.Stderr = &tailErr
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("tail printed %q: %v", sc.Text(), err)
				continue
			}
			events <- ev
		}
		close(events)
	}()
	defer func() {
		_ = tail.Process.Signal(syscall.SIGINT)
		if err := tail.Wait(); err != nil {
			t.Errorf("redcheck tail: %v\n%s", err, tailErr.String())
		}
	}()
	next := func(want string) map[string]any {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("redcheck tail ended before a %s event:\n%s", want, tailErr.String())
			}
			if ev["type"] != want || ev["thread_id"] != id {
				t.Fatalf("tail: %v, want a %s event of %s", ev, want, id)
			}
			return ev
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s event from redcheck tail within 30s:\n%s", want, tailErr.String())
		}
		return nil
	}

	example := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-url", url, "-prefix", prefix, "-id", id}, args...)...)
		cmd.Env = append(os.Environ(), exampleEnv+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("refund %s:\n%s", strings.Join(args, " "), out)
		return string(out), err
	}

	out, err := example()
	if err != nil {
		t.Fatalf("first process: %v", err)
	}
	m := regexp.MustCompile(`(?m)^interrupt: (\S+)$`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "interrupted: approve a refund of 42 for order 1001?") {
		t.Fatalf("first process did not interrupt for approval")
	}
	ev := next("checkpoint")
	if ev["step"] != 0.0 || ev["source"] != "eino" || len(ev["channels"].([]any)) != 1 {
		t.Errorf("checkpoint event %v", ev)
	}

	out, err = example("-resume", m[1], "-decision", "approved")
	if err != nil {
		t.Fatalf("second process: %v", err)
	}
	for _, want := range []string{
		`resuming order-1001 from Redis with the decision "approved"`,
		"assistant: Done: refund of 42 for order 1001 issued.",
		"deleted checkpoint ID order-1001",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("second process: no line %q", want)
		}
	}
	next("thread_deleted")

	rdb := redis.NewClient(mustParse(t, url))
	defer rdb.Close()
	keys, err := rdb.Keys(ctx, prefix+":*:t:"+id+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasSuffix(k, ":events") {
			t.Errorf("key left after the run: %s", k)
		}
	}

	// The run is done and deleted: resuming it again is an error, not a
	// new run.
	if out, err := example("-resume", m[1]); err == nil || !strings.Contains(out, "not exist") {
		t.Errorf("resume of a deleted run: %v", err)
	}
}

func mustParse(t *testing.T, url string) *redis.Options {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return opt
}

// goTool returns the go command of the toolchain running the test.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// realURL returns REDIS_URL, or the URL of a redis-server started for the
// test (skipped without redis-server on PATH, failed then when CI is set).
func realURL(t *testing.T) string {
	t.Helper()
	if url := os.Getenv("REDIS_URL"); url != "" {
		return url
	}
	srv, err := redisproc.Start(redisproc.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return "redis://" + srv.Addr
}
