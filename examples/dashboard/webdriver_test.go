package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// A tiny client of the W3C WebDriver protocol, enough to drive headless
// Chromium through chromedriver from a test: no module dependency.

const (
	chromiumBin     = "/usr/bin/chromium"
	chromedriverBin = "chromedriver"
	// elementKey names an element reference in WebDriver JSON.
	elementKey = "element-6066-11e4-a52e-4f735466cecf"
)

// browser is a WebDriver session of a headless Chromium.
type browser struct {
	t       *testing.T
	base    string // http://127.0.0.1:PORT/session/ID
	timeout time.Duration
}

// requireBrowser returns the chromedriver binary's path, or skips the test
// when Chromium or chromedriver is missing (fails it when CI is set).
func requireBrowser(t *testing.T) string {
	t.Helper()
	driver, err := exec.LookPath(chromedriverBin)
	if _, serr := os.Stat(chromiumBin); serr != nil || err != nil {
		msg := fmt.Sprintf("browser test needs %s and %s (Debian packages chromium, chromium-driver; .ci/run installs them)", chromiumBin, chromedriverBin)
		if os.Getenv("CI") != "" {
			t.Fatal(msg + ": missing with CI set")
		}
		t.Skip(msg + ": missing")
	}
	return driver
}

// newBrowser starts chromedriver on a free loopback port and a headless
// Chromium session with a fresh profile; both stop when the test ends.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	driver := requireBrowser(t)
	port := freePort(t)
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port))
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromedriver: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	root := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		var status struct {
			Value struct{ Ready bool } `json:"value"`
		}
		if err := call(http.MethodGet, root+"/status", nil, &status); err == nil && status.Value.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not become ready; its output:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}

	profile, err := os.MkdirTemp("", "dashboard-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"goog:chromeOptions": map[string]any{
			"binary": chromiumBin,
			"args": []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
				"--disable-background-networking", "--disable-dev-shm-usage",
				"--user-data-dir=" + profile, "--window-size=1400,900"},
		},
	}}}
	var session struct {
		Value struct {
			SessionID string `json:"sessionId"`
		} `json:"value"`
	}
	if err := call(http.MethodPost, root+"/session", caps, &session); err != nil {
		t.Fatalf("new session: %v; chromedriver output:\n%s", err, logs)
	}
	b := &browser{t: t, base: root + "/session/" + session.Value.SessionID, timeout: 10 * time.Second}
	t.Cleanup(func() { _ = call(http.MethodDelete, b.base, nil, nil) }) // quits Chromium
	return b
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// call sends one WebDriver command and decodes the reply's JSON into out.
func call(method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// do runs a command of the session and returns its "value".
func (b *browser) do(method, path string, body any) json.RawMessage {
	b.t.Helper()
	var reply struct {
		Value json.RawMessage `json:"value"`
	}
	if err := call(method, b.base+path, body, &reply); err != nil {
		b.t.Fatalf("webdriver: %v", err)
	}
	return reply.Value
}

func (b *browser) navigate(url string) {
	b.t.Helper()
	b.do(http.MethodPost, "/url", map[string]string{"url": url})
}

// exec runs script in the page (its arguments are `arguments[i]`) and
// decodes its return value into out (nil: ignored).
func (b *browser) exec(out any, script string, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	v := b.do(http.MethodPost, "/execute/sync", map[string]any{"script": script, "args": args})
	if out != nil {
		if err := json.Unmarshal(v, out); err != nil {
			b.t.Fatalf("script result %s: %v", v, err)
		}
	}
}

// find returns the reference of the first element matching a CSS selector,
// waiting for it up to the browser's timeout.
func (b *browser) find(css string) string {
	b.t.Helper()
	deadline := time.Now().Add(b.timeout)
	for {
		var reply struct {
			Value []map[string]string `json:"value"`
		}
		if err := call(http.MethodPost, b.base+"/elements", map[string]string{"using": "css selector", "value": css}, &reply); err != nil {
			b.t.Fatalf("webdriver: %v", err)
		}
		if len(reply.Value) > 0 {
			return reply.Value[0][elementKey]
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no element %q after %v", css, b.timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *browser) click(css string) {
	b.t.Helper()
	b.do(http.MethodPost, "/element/"+b.find(css)+"/click", map[string]any{})
}

// waitFor polls a script until it returns true, up to the browser's timeout.
func (b *browser) waitFor(what, script string, args ...any) {
	b.t.Helper()
	deadline := time.Now().Add(b.timeout)
	for {
		var ok bool
		b.exec(&ok, script, args...)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waited %v for %s", b.timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot returns a PNG of the viewport.
func (b *browser) screenshot() []byte {
	b.t.Helper()
	var s string
	if err := json.Unmarshal(b.do(http.MethodGet, "/screenshot", nil), &s); err != nil {
		b.t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}
