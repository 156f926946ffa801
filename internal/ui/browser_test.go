package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser tests drive Debian's Chromium (/usr/bin/chromium, package
// chromium) headless through chromedp, on loopback only.

const chromiumBin = "/usr/bin/chromium"

// artifactsEnv names the directory where browser tests keep their
// screenshots; unset, a temporary directory of the test.
const artifactsEnv = "REDCHECK_ARTIFACTS"

// browser is a headless Chromium tab of one test.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// newBrowser starts a headless Chromium with a fresh profile and no
// network beyond what the page asks for; it stops when the test ends. It
// skips the test without Chromium (fails it when CI is set).
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumBin); err != nil {
		msg := fmt.Sprintf("browser test needs %s (Debian package chromium; .ci/run installs it)", chromiumBin)
		if os.Getenv("CI") != "" {
			t.Fatal(msg + ": missing with CI set")
		}
		t.Skip(msg + ": missing")
	}
	// A fresh profile, removed after the browser (not t.TempDir: Chromium's
	// helper processes may still write to it for a moment after it quits).
	profile, err := os.MkdirTemp("", "redcheck-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumBin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1366, 820),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("lang", "en-US"),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// Chromium newer than chromedp's protocol tables sends a few event
	// fields chromedp cannot decode (it logs them and goes on): not logged.
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithErrorf(func(string, ...any) {}))
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancel()
		cancelAlloc()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// The first Run starts the browser, which lives as long as the context
	// of that Run: ctx itself, not one with a deadline.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx}
}

// run runs chromedp actions with a time limit.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads url and waits for the page to be connected to its events.
func (b *browser) open(url string) {
	b.t.Helper()
	b.run("navigate to "+url, chromedp.Navigate(url))
	b.waitFor("the live event stream", `document.querySelector('#conn-status').dataset.state === 'live'`)
}

// eval evaluates a JavaScript expression into out (nil: ignored).
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	b.run("evaluate "+expr, chromedp.Evaluate(expr, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
}

// waitFor polls a JavaScript expression until it is true.
func (b *browser) waitFor(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		err := chromedp.Run(ctx, chromedp.Evaluate("!!("+expr+")", &ok))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var text string
			_ = chromedp.Run(b.ctx, chromedp.Evaluate(`document.body.innerText.slice(0, 2000)`, &text))
			b.t.Fatalf("waiting for %s: not true within 10s (error: %v); the page:\n%s", what, err, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// click clicks the first element matching a CSS selector. The page
// re-renders its lists on live events, so the node found may be replaced
// before the click reaches it ("Could not find node with given id"): the
// click is tried again on a fresh query until it lands or 10 s pass.
func (b *browser) click(sel string) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		err := chromedp.Run(ctx, chromedp.Click(sel, chromedp.ByQuery, chromedp.NodeVisible))
		cancel()
		if err == nil {
			return
		}
		if b.ctx.Err() != nil || time.Now().After(deadline) {
			b.t.Fatalf("click %s: %v", sel, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// text returns the innerText of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.eval(fmt.Sprintf(`(document.querySelector(%q) || {innerText: ''}).innerText`, sel), &s)
	return s
}

// screenshot keeps a PNG of the page as an artifact and logs its path.
func (b *browser) screenshot(name string) string {
	b.t.Helper()
	var png []byte
	b.run("screenshot", chromedp.CaptureScreenshot(&png))
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		dir = b.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(b.t.Name(), "/", "_")+"-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s (%d bytes)", path, len(png))
	return path
}

// setValue sets a form field's value and fires its input event.
func setValue(sel, value string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q;
		e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true })()`, sel, value), nil)
}

// chromedpNavigate loads a URL without waiting for the event stream.
func chromedpNavigate(url string) chromedp.Action { return chromedp.Navigate(url) }

// emulate sets the page's viewport.
func emulate(width, height int64) chromedp.Action {
	return chromedp.EmulateViewport(width, height)
}
