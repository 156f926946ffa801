package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// demoAgent simulates a few agent threads writing to a saver, so that the
// UI has something to show. Each turn one thread, round robin, does
// its next action: the tasks of its current step store their pending
// writes, or the step ends with a new checkpoint. After steps steps a
// thread rests for rest turns, then is deleted and starts over: the demo
// runs for ever in bounded memory.
type demoAgent struct {
	saver   *redissaver.Saver
	steps   int
	rest    int
	threads []*demoThread
	next    int
}

// demoThread is one simulated conversation.
type demoThread struct {
	id      string
	request string   // the user's input
	lines   []string // what the agent's tasks say, in turn
	ask     string   // if set, the question of an interrupt() after the last step
	// The graph state: the latest checkpoint and its channels.
	cfg      checkpoint.Config
	started  bool
	step     int64
	messages []any
	versions map[string]string
	pending  []checkpoint.Write // stored writes of the current step
	rested   int
}

func newDemoAgent(saver *redissaver.Saver, steps, rest int) *demoAgent {
	return &demoAgent{saver: saver, steps: steps, rest: rest, threads: []*demoThread{
		{id: "demo-trip-planner", request: "Plan a rainy day in Paris.", lines: []string{
			"Checking the forecast: rain all day, 14°C.", "Louvre and Orsay are open and indoor.",
			"Café de Flore has tables at 13:00.", "Booked: Louvre at 10:00.", "Booked: Orsay at 15:00.",
		}},
		{id: "demo-support-desk", request: "My order #4512 arrived damaged.", lines: []string{
			"Looking up order #4512.", "Shipped 3 days ago, carrier reports a dropped parcel.",
			"Refund policy: full refund within 30 days.", "Refund of €49.90 prepared.", "Replacement prepared.",
		}, ask: "Approve the refund of €49.90 for order #4512?"},
		{id: "demo-research", request: "Summarise recent work on vector clocks.", lines: []string{
			"Searching: vector clocks, interval tree clocks, dotted version vectors.", "Found 12 papers, reading abstracts.",
			"Dotted version vectors bound metadata per key.", "Drafting the summary.", "Citations checked.",
		}},
	}}
}

// threadIDs returns the threads the demo writes.
func (a *demoAgent) threadIDs() []string {
	out := make([]string, len(a.threads))
	for i, t := range a.threads {
		out[i] = t.id
	}
	return out
}

// run takes a turn every interval until ctx ends. Errors are logged: the
// demo goes on.
func (a *demoAgent) run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := a.turn(ctx); err != nil && ctx.Err() == nil {
			log.Printf("dashboard: demo agent: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// turn does the next action of the next thread.
func (a *demoAgent) turn(ctx context.Context) error {
	t := a.threads[a.next]
	a.next = (a.next + 1) % len(a.threads)
	switch {
	case !t.started:
		return a.start(ctx, t)
	case t.step+1 >= int64(a.steps):
		if t.rested++; t.rested <= a.rest {
			if t.rested == 1 && t.ask != "" { // waits for a human while it rests
				w := checkpoint.Write{Channel: checkpoint.InterruptChannel, Value: map[string]any{"value": t.ask, "id": "approve-" + t.id}}
				return a.saver.PutWrites(ctx, t.cfg, []checkpoint.Write{w}, fmt.Sprintf("step%d:approve", t.step+1), "approve")
			}
			return nil
		}
		t.started = false
		return a.saver.DeleteThread(ctx, t.id)
	case t.pending == nil:
		return a.writeTasks(ctx, t)
	}
	return a.finishStep(ctx, t)
}

// demoTask is a node run in a step, with the writes it produces.
type demoTask struct {
	name   string
	writes []checkpoint.Write
}

func message(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// start stores the input checkpoint (step -1) of a new run.
func (a *demoAgent) start(ctx context.Context, t *demoThread) error {
	*t = demoThread{id: t.id, request: t.request, lines: t.lines, ask: t.ask, started: true, step: -1,
		cfg: checkpoint.Config{ThreadID: t.id}, versions: map[string]string{}}
	t.messages = []any{message("user", t.request)}
	return a.put(ctx, t, "input", map[string]any{
		"messages": t.messages,
		"step":     t.step,
		"config":   map[string]any{"model": "demo-llm", "temperature": 0.2},
		"scratch":  []byte{0xde, 0xad, 0xbe, 0xef},
	})
}

// writeTasks stores the pending writes of the current step's tasks.
func (a *demoAgent) writeTasks(ctx context.Context, t *demoThread) error {
	line := t.lines[int(t.step+1)%len(t.lines)]
	tasks := []demoTask{{"agent", []checkpoint.Write{{Channel: "messages", Value: message("assistant", line)}}}}
	if t.step%2 == 0 {
		tasks = append(tasks, demoTask{"tools", []checkpoint.Write{
			{Channel: "messages", Value: message("tool", "ok: "+line)},
			{Channel: "tool_calls", Value: t.step + 1},
		}})
	}
	t.pending = []checkpoint.Write{}
	for _, task := range tasks {
		taskID := fmt.Sprintf("step%d:%s", t.step+1, task.name)
		if err := a.saver.PutWrites(ctx, t.cfg, task.writes, taskID, task.name); err != nil {
			return fmt.Errorf("put writes of %s: %w", t.id, err)
		}
		t.pending = append(t.pending, task.writes...)
	}
	return nil
}

// finishStep applies the step's writes and stores the next checkpoint.
func (a *demoAgent) finishStep(ctx context.Context, t *demoThread) error {
	changed := map[string]any{}
	for _, w := range t.pending {
		switch w.Channel {
		case "messages":
			t.messages = append(t.messages, w.Value)
			changed["messages"] = t.messages
		default:
			changed[w.Channel] = w.Value
		}
	}
	t.pending = nil
	t.step++
	changed["step"] = t.step
	if t.step%3 == 0 {
		changed["progress"] = float64(t.step+1) / float64(a.steps)
	}
	return a.put(ctx, t, "loop", changed)
}

// put stores a checkpoint with new versions of the changed channels.
func (a *demoAgent) put(ctx context.Context, t *demoThread, source string, changed map[string]any) error {
	newVersions := map[string]string{}
	for ch := range changed {
		t.versions[ch] = a.saver.NextVersion(t.versions[ch])
		newVersions[ch] = t.versions[ch]
	}
	versions := make(map[string]string, len(t.versions))
	for ch, v := range t.versions {
		versions[ch] = v
	}
	cp := checkpoint.Checkpoint{
		V: 4, ID: checkpoint.NewID(), TS: time.Now().UTC().Format(time.RFC3339Nano),
		ChannelValues: changed, ChannelVersions: versions,
	}
	md := checkpoint.Metadata{"source": source, "step": t.step, "run_id": "demo"}
	cfg, err := a.saver.Put(ctx, t.cfg, cp, md, newVersions)
	if err != nil {
		return fmt.Errorf("put checkpoint of %s: %w", t.id, err)
	}
	t.cfg = cfg
	return nil
}
