// Command quickstart is the redcheck demo (make demo): it runs a small,
// simulated agent graph over a Redis saver, one checkpoint per super-step
// with the pending writes of its tasks, stops at an interrupt and resumes
// from the stored state, then travels back in time: it lists the history,
// replays an earlier checkpoint and forks the thread from it.
//
// It uses the Redis named by REDIS_URL (e.g. redis://127.0.0.1:6379/15) or,
// when that is unset, an embedded miniredis. Its keys live under a prefix of
// their own, and it deletes its thread before it exits.
package main

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/examples/internal/demo"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

const threadID = "trip-planner"

func main() { demo.Main("quickstart", run) }

func run(ctx context.Context, rdb *redis.Client) (err error) {

	// A prefix of our own: nothing of this run can meet other data on a
	// shared Redis, nor the data of another run.
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: demo.Embedded(), Prefix: "quickstart:" + checkpoint.NewID()})
	if err != nil {
		return err
	}
	defer func() {
		if derr := saver.DeleteThread(context.Background(), threadID); derr != nil && err == nil {
			err = fmt.Errorf("delete thread: %w", derr)
		}
		if err == nil {
			fmt.Printf("\ncleanup: deleted thread %q (every checkpoint, write and value)\n", threadID)
		}
	}()

	g := &graph{saver: saver, latest: checkpoint.Root(threadID, ""), cp: checkpoint.Empty()}
	if err := g.runUntilInterrupt(ctx); err != nil {
		return err
	}
	if err := g.resume(ctx); err != nil {
		return err
	}
	if err := g.showStoredValues(ctx); err != nil {
		return err
	}
	return g.timeTravel(ctx)
}

// state is the graph state: three channels.
type state struct {
	messages []any          // channel "messages": grows every step
	step     int64          // channel "step": the super-step
	config   map[string]any // channel "config": set once, never changes
}

// task is one node run in a super-step, with the writes it produces.
type task struct {
	name   string
	writes []checkpoint.Write
}

// graph runs the simulated agent against the saver.
type graph struct {
	saver  *redissaver.Saver
	latest checkpoint.Config     // the latest stored checkpoint (Root before the first)
	cp     checkpoint.Checkpoint // that checkpoint (Empty before the first)
	st     state
	ids    map[int64]string // checkpoint ID of each step of the main branch
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func say(role, content string) checkpoint.Write {
	return checkpoint.Write{Channel: "messages", Value: msg(role, content)}
}

// script holds the tasks each super-step runs, from step -1 (the input).
var script = map[int64][]task{
	-1: {
		{"planner", []checkpoint.Write{say("assistant", "Let me check the weather and what is open.")}},
		{"weather", []checkpoint.Write{say("tool", "Paris: rain all day, 14°C")}},
	},
	0: {
		{"cafes", []checkpoint.Write{say("tool", "Café de Flore: open 7:30-1:30")}},
		{"museums", []checkpoint.Write{say("tool", "Louvre and Orsay: open, indoor")}},
	},
	// Step 1 interrupts: human_review asks before booking (see runUntilInterrupt).
	2: {
		{"book_louvre", []checkpoint.Write{say("tool", "Booked: Louvre, 10:00")}},
		{"book_orsay", []checkpoint.Write{say("tool", "Booked: Orsay, 15:00")}},
	},
	3: {
		{"agent", []checkpoint.Write{say("assistant", "All set: Louvre 10:00, Flore 13:00, Orsay 15:00.")}},
		{"summarizer", []checkpoint.Write{{Channel: "messages", Value: msg("system", "summary: rainy-day Paris plan, 2 bookings")}}},
	},
	// Step 4 has no task: the graph is done.
}

const lastStep = 4

// runUntilInterrupt puts the input checkpoint and runs super-steps until the
// human_review task of step 1 interrupts.
func (g *graph) runUntilInterrupt(ctx context.Context) error {
	fmt.Println("\n== 1. Run the graph: a checkpoint per super-step, then the writes of its tasks ==")
	fmt.Println("(only changed channels get a new version and are written; \"config\" never changes)")
	g.ids = map[int64]string{}
	g.st = state{
		messages: []any{msg("user", "Plan a rainy day in Paris.")},
		step:     -1,
		config:   map[string]any{"model": "demo-llm", "temperature": 0},
	}
	if err := g.put(ctx, []string{"messages", "step", "config"}, "input"); err != nil {
		return err
	}
	for {
		if g.st.step == 1 {
			// The agent drafts a plan, then human_review stops the run: it
			// stores an interrupt instead of a result.
			if err := g.writeTasks(ctx, []task{{"agent", []checkpoint.Write{say("assistant", "Draft: Louvre 10:00, Flore 13:00, Orsay 15:00. Book tickets?")}}}); err != nil {
				return err
			}
			question := map[string]any{"question": "Book tickets for the Louvre and the Orsay?"}
			if err := g.saver.PutWrites(ctx, g.latest, []checkpoint.Write{{Channel: checkpoint.InterruptChannel, Value: question}}, taskID(1, "human_review"), "human_review"); err != nil {
				return fmt.Errorf("put interrupt: %w", err)
			}
			fmt.Printf("        task %-12s -> %s %v\n", "human_review", checkpoint.InterruptChannel, question["question"])
			fmt.Println("  ... interrupted: the process stops here, waiting for a human.")
			return nil
		}
		if err := g.writeTasks(ctx, script[g.st.step]); err != nil {
			return err
		}
		g.advance(script[g.st.step])
		if err := g.put(ctx, []string{"messages", "step"}, "loop"); err != nil {
			return err
		}
	}
}

// resume starts over from what Redis holds, as a new process would: it reads
// the latest checkpoint, finds the interrupt, stores the human's answer and
// runs the remaining steps.
func (g *graph) resume(ctx context.Context) error {
	fmt.Println("\n== 2. Resume: read the latest checkpoint back (GetTuple) and answer the interrupt ==")
	latest, err := g.saver.GetTuple(ctx, checkpoint.Config{ThreadID: threadID})
	if err != nil {
		return fmt.Errorf("get latest: %w", err)
	}
	st, err := stateOf(latest.Checkpoint)
	if err != nil {
		return err
	}
	fmt.Printf("latest checkpoint %s: step %d, %d messages, %d pending writes:\n",
		demo.Short(latest.Config.CheckpointID), st.step, len(st.messages), len(latest.PendingWrites))
	var interrupted string
	var done []task // the tasks that finished, in (task ID, index) order
	for _, pw := range latest.PendingWrites {
		fmt.Printf("  %-20s %-14s %s\n", pw.TaskID, pw.Channel, describe(pw.Value))
		switch pw.Channel {
		case checkpoint.InterruptChannel:
			interrupted = pw.TaskID
		case checkpoint.ResumeChannel:
		default:
			done = append(done, task{strings.TrimPrefix(pw.TaskID, taskID(st.step, "")), []checkpoint.Write{{Channel: pw.Channel, Value: pw.Value}}})
		}
	}
	if interrupted == "" {
		return fmt.Errorf("no interrupt found in the latest checkpoint")
	}
	g.st, g.latest, g.cp = st, latest.Config, latest.Checkpoint

	// The answer is a write to the resume channel of the interrupted task;
	// the task then runs again and, this time, writes its result.
	if err := g.saver.PutWrites(ctx, g.latest, []checkpoint.Write{{Channel: checkpoint.ResumeChannel, Value: "yes"}}, interrupted, "human_review"); err != nil {
		return fmt.Errorf("put resume: %w", err)
	}
	fmt.Printf("resume: %s %s = %q; human_review runs again:\n", interrupted, checkpoint.ResumeChannel, "yes")
	review := task{"human_review", []checkpoint.Write{say("user", "Yes, book both.")}}
	if err := g.writeTasks(ctx, []task{review}); err != nil {
		return err
	}
	g.advance(append(done, review))
	if err := g.put(ctx, []string{"messages", "step"}, "loop"); err != nil {
		return err
	}
	for g.st.step < lastStep {
		if err := g.writeTasks(ctx, script[g.st.step]); err != nil {
			return err
		}
		g.advance(script[g.st.step])
		if err := g.put(ctx, []string{"messages", "step"}, "loop"); err != nil {
			return err
		}
	}
	fmt.Println("        (no task: the graph is done)")
	return nil
}

// showStoredValues counts the channel versions the thread's history holds,
// one value stored per channel version written: "config", written once,
// has one version, yet every checkpoint reads it back.
func (g *graph) showStoredValues(ctx context.Context) error {
	versions := map[string]map[string]bool{}
	for tuple, err := range g.saver.List(ctx, checkpoint.ListQuery{ThreadID: threadID}) {
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		for ch, v := range tuple.Checkpoint.ChannelVersions {
			if versions[ch] == nil {
				versions[ch] = map[string]bool{}
			}
			versions[ch][v] = true
		}
	}
	fmt.Printf("\nvalues stored: messages %d, step %d, config %d (config was written once, at step -1)\n",
		len(versions["messages"]), len(versions["step"]), len(versions["config"]))
	latest, err := g.saver.GetTuple(ctx, checkpoint.Config{ThreadID: threadID})
	if err != nil {
		return fmt.Errorf("get latest: %w", err)
	}
	fmt.Printf("yet the latest checkpoint (step %v) reads it back: config %s = %v\n", latest.Metadata["step"],
		demo.Counter(latest.Checkpoint.ChannelVersions["config"]), latest.Checkpoint.ChannelValues["config"])
	return nil
}

// timeTravel lists the history, replays an earlier checkpoint and forks the
// thread from it.
func (g *graph) timeTravel(ctx context.Context) error {
	fmt.Println("\n== 3. Time travel: the history, newest first (List) ==")
	if _, err := g.printHistory(ctx); err != nil {
		return err
	}

	// Replay: read step 0 by its ID and apply its stored pending writes; the
	// result is what step 1 recorded.
	id0 := g.ids[0]
	fmt.Printf("\n-- replay from step 0 (%s) --\n", demo.Short(id0))
	t0, err := g.saver.GetTuple(ctx, checkpoint.Config{ThreadID: threadID, CheckpointID: id0})
	if err != nil {
		return fmt.Errorf("get step 0: %w", err)
	}
	st0, err := stateOf(t0.Checkpoint)
	if err != nil {
		return err
	}
	fmt.Printf("state at step 0: %d messages, last: %s\n", len(st0.messages), describe(st0.messages[len(st0.messages)-1]))
	replayed := slices.Clone(st0.messages)
	for _, pw := range t0.PendingWrites {
		fmt.Printf("  re-apply %-16s %s\n", pw.TaskID, describe(pw.Value))
		replayed = append(replayed, pw.Value)
	}
	t1, err := g.saver.GetTuple(ctx, checkpoint.Config{ThreadID: threadID, CheckpointID: g.ids[1]})
	if err != nil {
		return fmt.Errorf("get step 1: %w", err)
	}
	recorded, _ := t1.Checkpoint.ChannelValues["messages"].([]any)
	fmt.Printf("replayed %d messages; recorded step 1 has %d; equal: %v\n",
		len(replayed), len(recorded), reflect.DeepEqual(replayed, recorded))

	// Fork: a new checkpoint whose parent is step 0, with an edited state.
	fmt.Printf("\n-- fork from step 0: the user changes their mind --\n")
	g.st = st0
	g.st.messages = append(replayed, msg("user", "Actually, make it Rome."))
	g.st.step = 1
	g.latest, g.cp = t0.Config, t0.Checkpoint
	before := g.cp.ChannelVersions["messages"]
	if err := g.put(ctx, []string{"messages", "step"}, "fork"); err != nil {
		return err
	}
	recordedV := t1.Checkpoint.ChannelVersions["messages"]
	fmt.Printf("messages %s -> %s: the counter the main branch took at step 1 too; the random suffix keeps the versions apart: %v\n",
		demo.Counter(before), demo.Counter(g.cp.ChannelVersions["messages"]), g.cp.ChannelVersions["messages"] != recordedV)

	fmt.Println("\nhistory now (List, newest first):")
	tuples, err := g.printHistory(ctx)
	if err != nil {
		return err
	}
	children := map[string][]string{}
	for _, t := range tuples {
		if t.ParentConfig != nil {
			p := t.ParentConfig.CheckpointID
			children[p] = append(children[p], fmt.Sprintf("%s (%v, step %v)", demo.Short(t.Config.CheckpointID), t.Metadata["source"], t.Metadata["step"]))
		}
	}
	kids := children[id0]
	slices.Reverse(kids) // oldest first
	fmt.Printf("the thread branches at step 0 %s: %d children: %s\n", demo.Short(id0), len(kids), strings.Join(kids, ", "))
	return nil
}

// printHistory lists the thread newest first and prints one line per
// checkpoint.
func (g *graph) printHistory(ctx context.Context) ([]*checkpoint.Tuple, error) {
	var out []*checkpoint.Tuple
	fmt.Printf("  %4s  %-6s  %-7s  %-7s  %s\n", "step", "source", "id", "parent", "messages")
	for t, err := range g.saver.List(ctx, checkpoint.ListQuery{ThreadID: threadID}) {
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		parent := ""
		if t.ParentConfig != nil {
			parent = t.ParentConfig.CheckpointID
		}
		msgs, _ := t.Checkpoint.ChannelValues["messages"].([]any)
		fmt.Printf("  %4v  %-6v  %-7s  %-7s  %d\n", t.Metadata["step"], t.Metadata["source"],
			demo.Short(t.Config.CheckpointID), demo.Short(parent), len(msgs))
		out = append(out, t)
	}
	return out, nil
}

// advance applies the writes of tasks to the state, in task ID order (the
// order a tuple's pending writes come in), and moves to the next step.
func (g *graph) advance(tasks []task) {
	tasks = slices.Clone(tasks)
	slices.SortFunc(tasks, func(a, b task) int { return strings.Compare(a.name, b.name) })
	for _, t := range tasks {
		for _, w := range t.writes {
			if w.Channel == "messages" {
				g.st.messages = append(g.st.messages, w.Value)
			}
		}
	}
	g.st.step++
}

// put stores the state as a checkpoint, child of the latest one. Only the
// channels in changed get a new version (Next bumps them) and are passed in
// newVersions: the saver writes their values only, and reads the others back
// from the values stored for their (unchanged) versions.
func (g *graph) put(ctx context.Context, changed []string, source string) error {
	values := map[string]any{"messages": slices.Clone(g.st.messages), "step": g.st.step, "config": g.st.config}
	updates := map[string]any{}
	for _, ch := range changed {
		updates[ch] = values[ch]
	}
	cp, newVersions := checkpoint.Next(g.cp, updates, g.saver.NextVersion)
	cp.VersionsSeen["agent"] = maps.Clone(cp.ChannelVersions) // the agent ran on this state
	md := checkpoint.Metadata{"source": source, "step": g.st.step, "parents": map[string]any{}}
	parent := g.latest.CheckpointID
	cfg, err := g.saver.Put(ctx, checkpoint.Parent(g.latest), cp, md, newVersions)
	if err != nil {
		return fmt.Errorf("put step %d: %w", g.st.step, err)
	}
	g.latest, g.cp = cfg, cp
	if source != "fork" {
		g.ids[g.st.step] = cfg.CheckpointID
	}
	var wrote, kept []string
	for _, ch := range []string{"messages", "step", "config"} {
		if _, ok := newVersions[ch]; ok {
			wrote = append(wrote, ch+" "+demo.Counter(g.cp.ChannelVersions[ch]))
		} else {
			kept = append(kept, ch+" "+demo.Counter(g.cp.ChannelVersions[ch]))
		}
	}
	keptText := ""
	if len(kept) > 0 {
		keptText = "; kept " + strings.Join(kept, ", ")
	}
	fmt.Printf("step %2d [%-5s] %s (parent %s): wrote %s%s; messages=%d\n", g.st.step, source,
		demo.Short(cfg.CheckpointID), demo.Short(parent), strings.Join(wrote, ", "), keptText, len(g.st.messages))
	return nil
}

// writeTasks stores the writes of each task against the latest checkpoint.
func (g *graph) writeTasks(ctx context.Context, tasks []task) error {
	for _, t := range tasks {
		if err := g.saver.PutWrites(ctx, g.latest, t.writes, taskID(g.st.step, t.name), t.name); err != nil {
			return fmt.Errorf("put writes of %s: %w", t.name, err)
		}
		for _, w := range t.writes {
			fmt.Printf("        task %-12s -> %s %s\n", t.name, w.Channel, describe(w.Value))
		}
	}
	return nil
}

// taskID names a task of a step. Real runtimes use UUIDs; any string works.
func taskID(step int64, name string) string {
	return "step" + strconv.FormatInt(step, 10) + ":" + name
}

// stateOf rebuilds the state from a checkpoint read back from the saver.
// Values come back as the serializer decodes them: []any, map[string]any,
// int64.
func stateOf(cp checkpoint.Checkpoint) (state, error) {
	messages, ok := cp.ChannelValues["messages"].([]any)
	if !ok {
		return state{}, fmt.Errorf("checkpoint %s: messages is %T", cp.ID, cp.ChannelValues["messages"])
	}
	step, ok := cp.ChannelValues["step"].(int64)
	if !ok {
		return state{}, fmt.Errorf("checkpoint %s: step is %T", cp.ID, cp.ChannelValues["step"])
	}
	config, ok := cp.ChannelValues["config"].(map[string]any)
	if !ok {
		return state{}, fmt.Errorf("checkpoint %s: config is %T", cp.ID, cp.ChannelValues["config"])
	}
	return state{messages: messages, step: step, config: config}, nil
}

// describe prints a message as role: "content", any other value with %v.
func describe(v any) string {
	if m, ok := v.(map[string]any); ok {
		if role, ok := m["role"].(string); ok {
			return fmt.Sprintf("%s: %q", role, m["content"])
		}
	}
	return fmt.Sprint(v)
}
