package ui

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
)

// docsPNGEnv names a file that TestBrowserDocsScreenshot writes its
// screenshot to as well: docs/ui.png is made with
//
//	REDCHECK_DOCS_PNG=$PWD/docs/ui.png go test -run TestBrowserDocsScreenshot ./internal/ui/
const docsPNGEnv = "REDCHECK_DOCS_PNG"

// TestBrowserDocsScreenshot shows a small, realistic prefix: a few agent
// threads, one waiting on an interrupt, a thread's timeline and the diff
// of its last step.
func TestBrowserDocsScreenshot(t *testing.T) {
	b := newBrowser(t)
	_, rdb := redistest.Mini(t) // a fresh server: a plain prefix is free
	f := serveUI(t, rdb, "agents", false)
	msg := func(role, content string) any { return map[string]any{"role": role, "content": content} }
	say := func(thread, request string, lines []string, run string) checkpoint.Config {
		msgs := []any{msg("user", request)}
		cfg := f.putMD(t, checkpoint.Config{ThreadID: thread}, checkpoint.Metadata{"source": "input", "step": -1, "run_id": run},
			map[string]any{"messages": slices.Clone(msgs)})
		for i, line := range lines {
			msgs = append(msgs, msg("assistant", line))
			values := map[string]any{"messages": slices.Clone(msgs)}
			if i == len(lines)-1 {
				values["plan"] = map[string]any{"status": "ready", "items": len(lines)}
			}
			cfg = f.putMD(t, cfg, checkpoint.Metadata{"source": "loop", "step": i, "run_id": run}, values)
		}
		return cfg
	}
	say("research-vector-clocks", "Summarise recent work on vector clocks.", []string{"Found 12 papers.", "Drafting the summary."}, "run-7f3a")
	support := say("support-order-4512", "My order #4512 arrived damaged.", []string{"Looking up order #4512.", "Carrier reports a dropped parcel.", "Refund of €49.90 prepared."}, "run-91c2")
	f.interrupt(t, support, "approve", "Approve the refund of €49.90 for order #4512?")
	trip := say("trip-planner-paris", "Plan a rainy day in Paris.", []string{"Forecast: rain all day, 14°C.", "Louvre and Orsay are indoor.", "Café de Flore has tables at 13:00.", "Booked: Louvre at 10:00."}, "run-2b8e")
	if err := f.saver.PutWrites(context.Background(), trip, []checkpoint.Write{{Channel: "messages", Value: msg("assistant", "Booked: Orsay at 15:00.")}}, "step4:agent", ""); err != nil {
		t.Fatal(err)
	}
	b.run("window size", emulate(1280, 720))
	b.open(f.ts.URL + "/#thread=trip-planner-paris")
	b.waitFor("the timeline", `document.querySelectorAll('#timeline .cp').length === 5 && document.querySelector('#inbox-count').textContent === '1'`)
	b.click(`#timeline .cp[data-checkpoint-id="` + trip.CheckpointID + `"]`)
	b.waitFor("the state", `document.querySelector('#state [data-state-checkpoint-id="`+trip.CheckpointID+`"]')`)
	b.click(`#state .state-actions button`)
	b.waitFor("the diff", `document.querySelector('#diff .change[data-channel="plan"]')`)
	b.waitFor("the appended message", `document.querySelector('#diff .change[data-channel="messages"] .new').innerText.includes('Booked: Louvre')`)
	path := b.screenshot("docs")
	if dst := os.Getenv(docsPNGEnv); dst != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", dst, len(data))
	}
}
