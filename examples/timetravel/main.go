// Command timetravel walks through the history features of the redcheck
// Redis saver: it builds a thread of ten super-steps with a delta channel,
// replays an earlier checkpoint and forks the thread from it, then uses the
// extended capabilities, found by type assertion on the saver: CopyThread,
// DeltaChannelHistory, Prune (keep_latest) and DeleteForRuns.
//
// It uses the Redis named by REDIS_URL (e.g. redis://127.0.0.1:6379/15) or,
// when that is unset, an embedded miniredis. Its keys live under a prefix of
// their own, and it deletes its threads before it exits.
package main

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/examples/internal/demo"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

const (
	mainThread = "research"
	copyThread = "research-copy"
	steps      = 10 // super-steps of the main branch
	snapEvery  = 4  // the "log" channel stores a snapshot every snapEvery steps
)

func main() { demo.Main("timetravel", run) }

func run(ctx context.Context, rdb *redis.Client) (err error) {
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: demo.Embedded(), Prefix: "timetravel:" + checkpoint.NewID()})
	if err != nil {
		return err
	}
	var saver checkpoint.Saver = s // from here on, only the protocol
	defer func() {
		for _, th := range []string{mainThread, copyThread} {
			if derr := saver.DeleteThread(context.Background(), th); derr != nil && err == nil {
				err = fmt.Errorf("delete thread %s: %w", th, derr)
			}
		}
		if err == nil {
			fmt.Printf("\ncleanup: deleted threads %q and %q\n", mainThread, copyThread)
		}
	}()
	return timeTravel(ctx, saver)
}

// state is the graph state. "counter" is a plain channel, stored at every
// step. "log" is a delta channel: a growing list whose full value is stored
// (as a checkpoint.DeltaSnapshot) only every snapEvery steps; in between,
// only the task writes that extend it are stored, and readers rebuild it
// with DeltaChannelHistory.
type state struct {
	step    int64
	counter int64
	log     []any
}

// runner puts the checkpoints of one branch.
type runner struct {
	saver  checkpoint.Saver
	parent checkpoint.Config     // what the next Put gets: Root, then Parent of the latest
	cp     checkpoint.Checkpoint // the latest checkpoint of the branch (Empty before the first)
	st     state
}

// put stores the state as a child of the latest checkpoint, then the write
// of the step's worker task to "log", and applies that write to the state.
// Both channels change at every step, so both get a new version.
func (r *runner) put(ctx context.Context, source, runID string) (checkpoint.Config, error) {
	updates := map[string]any{"counter": r.st.counter, "log": nil}
	snapshot := r.st.step%snapEvery == 0
	if snapshot {
		updates["log"] = checkpoint.DeltaSnapshot{Value: slices.Clone(r.st.log)}
	}
	cp, newVersions := checkpoint.Next(r.cp, updates, r.saver.NextVersion)
	if !snapshot {
		delete(cp.ChannelValues, "log") // a new version but no value: the saver stores none
	}
	cp.VersionsSeen["worker"] = maps.Clone(cp.ChannelVersions) // the worker ran on this state
	md := checkpoint.Metadata{"source": source, "step": r.st.step, "run_id": runID}
	cfg, err := r.saver.Put(ctx, r.parent, cp, md, newVersions)
	if err != nil {
		return cfg, fmt.Errorf("put step %d: %w", r.st.step, err)
	}
	r.parent, r.cp = checkpoint.Parent(cfg), cp
	entry := fmt.Sprintf("step %d: counter=%d", r.st.step, r.st.counter)
	if err := r.saver.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "log", Value: entry}}, fmt.Sprintf("worker@%d", r.st.step), "worker"); err != nil {
		return cfg, fmt.Errorf("put writes of step %d: %w", r.st.step, err)
	}
	r.st.log = append(r.st.log, entry)
	r.st.step++
	r.st.counter++
	return cfg, nil
}

func timeTravel(ctx context.Context, saver checkpoint.Saver) error {
	fmt.Printf("\n== 1. A thread of %d super-steps; \"log\" is a delta channel, snapshotted every %d steps ==\n", steps, snapEvery)
	r := &runner{saver: saver, parent: checkpoint.Root(mainThread, ""), cp: checkpoint.Empty(), st: state{log: []any{}}}
	ids := make([]string, 0, steps)
	for r.st.step < steps {
		runID := "run-1"
		if r.st.step >= steps/2 {
			runID = "run-2" // the thread was resumed by a second run
		}
		cfg, err := r.put(ctx, "loop", runID)
		if err != nil {
			return err
		}
		ids = append(ids, cfg.CheckpointID)
	}
	if err := printList(ctx, saver, mainThread); err != nil {
		return err
	}

	// Replay: read step 5 back and rebuild its full state, the delta channel
	// included, as a runtime resuming from it would.
	const from = 5
	fmt.Printf("\n== 2. Replay from step %d (%s) ==\n", from, demo.Short(ids[from]))
	historian, ok := saver.(checkpoint.DeltaHistorian)
	if !ok {
		return fmt.Errorf("the saver cannot rebuild delta channels")
	}
	tup, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: mainThread, CheckpointID: ids[from]})
	if err != nil {
		return fmt.Errorf("get step %d: %w", from, err)
	}
	_, stored := tup.Checkpoint.ChannelValues["log"]
	fmt.Printf("stored: counter=%v, log version %s with a stored value: %v; pending writes: %s\n",
		tup.Checkpoint.ChannelValues["counter"], demo.Counter(tup.Checkpoint.ChannelVersions["log"]), stored, writes(tup.PendingWrites))
	log, err := rebuildLog(ctx, historian, tup.Config)
	if err != nil {
		return err
	}
	fmt.Printf("log rebuilt from its seed and the writes since: %d entries, last %q\n", len(log), log[len(log)-1])

	// Fork: a child of step 5 that makes a different choice. It applies step
	// 5's write, as the main branch did, but sets the counter to 100.
	fmt.Printf("\n== 3. Fork from step %d: what if the counter had been 100? ==\n", from)
	fork := &runner{saver: saver, parent: checkpoint.Parent(tup.Config), cp: tup.Checkpoint,
		st: state{step: from + 1, counter: 100, log: log}}
	for _, pw := range tup.PendingWrites {
		if pw.Channel == "log" {
			fork.st.log = append(fork.st.log, pw.Value)
		}
	}
	if _, err := fork.put(ctx, "fork", "run-3"); err != nil {
		return err
	}
	tip, err := fork.put(ctx, "loop", "run-3")
	if err != nil {
		return err
	}
	if err := printList(ctx, saver, mainThread); err != nil {
		return err
	}
	fmt.Printf("step %d %s now has two children: step 6 of run-2 and the fork\n", from, demo.Short(ids[from]))

	fmt.Println("\n== 4. CopyThread ==")
	copier, ok := saver.(checkpoint.ThreadCopier)
	if !ok {
		return fmt.Errorf("the saver cannot copy threads")
	}
	if err := copier.CopyThread(ctx, mainThread, copyThread); err != nil {
		return fmt.Errorf("copy thread: %w", err)
	}
	src, err := listIDs(ctx, saver, mainThread)
	if err != nil {
		return err
	}
	dst, err := listIDs(ctx, saver, copyThread)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d checkpoints; %s: %d checkpoints; same IDs in the same order: %v\n",
		mainThread, len(src), copyThread, len(dst), slices.Equal(src, dst))

	fmt.Println("\n== 5. DeltaChannelHistory of \"log\" at the fork's tip ==")
	hist, err := historian.DeltaChannelHistory(ctx, tip, []string{"log"})
	if err != nil {
		return fmt.Errorf("delta channel history: %w", err)
	}
	h := hist["log"]
	seed, isSnap := h.Seed.(checkpoint.DeltaSnapshot)
	if !h.HasSeed || !isSnap {
		return fmt.Errorf("no snapshot seed for log (seed %T)", h.Seed)
	}
	seedLog, _ := seed.Value.([]any)
	fmt.Printf("seed: a DeltaSnapshot of %d entries: %s\n", len(seedLog), quoteAll(seedLog))
	fmt.Printf("writes since, oldest first (the seed checkpoint's own included): %s\n", writes(h.Writes))
	rebuilt := slices.Clone(seedLog)
	for _, w := range h.Writes {
		rebuilt = append(rebuilt, w.Value)
	}
	// The tip's own write is not part of its state: remove it from the
	// runner's log before comparing.
	fmt.Printf("rebuilt log: %d entries, equal to the fork's own: %v\n",
		len(rebuilt), reflect.DeepEqual(rebuilt, fork.st.log[:len(fork.st.log)-1]))

	fmt.Println("\n== 6. Prune keep_latest on the copy ==")
	pruner, ok := saver.(checkpoint.Pruner)
	if !ok {
		return fmt.Errorf("the saver cannot prune")
	}
	if err := pruner.Prune(ctx, []string{copyThread}, checkpoint.PruneKeepLatest); err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	fmt.Println("the latest checkpoint (the fork's tip) stays, with its ancestors back to the nearest \"log\" seed:")
	if err := printList(ctx, saver, copyThread); err != nil {
		return err
	}
	log, err = rebuildLog(ctx, historian, tip)
	if err != nil {
		return err
	}
	copied, err := rebuildLog(ctx, historian, checkpoint.Config{ThreadID: copyThread, CheckpointID: tip.CheckpointID})
	if err != nil {
		return err
	}
	fmt.Printf("the pruned copy still rebuilds the tip's log: %d entries, equal to the original's: %v\n",
		len(copied), reflect.DeepEqual(copied, log))

	fmt.Println("\n== 7. DeleteForRuns run-2 ==")
	deleter, ok := saver.(checkpoint.RunDeleter)
	if !ok {
		return fmt.Errorf("the saver cannot delete runs")
	}
	if err := deleter.DeleteForRuns(ctx, []string{"run-2"}); err != nil {
		return fmt.Errorf("delete for runs: %w", err)
	}
	fmt.Println("run-2's checkpoints are gone from both threads; the fork keeps its parent link to the deleted step 5")
	for _, th := range []string{mainThread, copyThread} {
		if err := printList(ctx, saver, th); err != nil {
			return err
		}
	}
	return nil
}

// rebuildLog returns the value of "log" at the checkpoint cfg: its nearest
// seed and the writes since, with DeltaChannelHistory.
func rebuildLog(ctx context.Context, historian checkpoint.DeltaHistorian, cfg checkpoint.Config) ([]any, error) {
	hist, err := historian.DeltaChannelHistory(ctx, cfg, []string{"log"})
	if err != nil {
		return nil, fmt.Errorf("delta channel history: %w", err)
	}
	h := hist["log"]
	var log []any
	if h.HasSeed {
		seed, ok := h.Seed.(checkpoint.DeltaSnapshot)
		if !ok {
			return nil, fmt.Errorf("log seed is a %T", h.Seed)
		}
		prefix, ok := seed.Value.([]any)
		if !ok {
			return nil, fmt.Errorf("log snapshot holds a %T", seed.Value)
		}
		log = slices.Clone(prefix)
	}
	for _, w := range h.Writes {
		log = append(log, w.Value)
	}
	return log, nil
}

// printList lists a thread, newest first, one line per checkpoint.
func printList(ctx context.Context, saver checkpoint.Saver, threadID string) error {
	var tuples []*checkpoint.Tuple
	for t, err := range saver.List(ctx, checkpoint.ListQuery{ThreadID: threadID}) {
		if err != nil {
			return fmt.Errorf("list %s: %w", threadID, err)
		}
		tuples = append(tuples, t)
	}
	present := map[string]bool{}
	for _, t := range tuples {
		present[t.Config.CheckpointID] = true
	}
	fmt.Printf("%s (%d checkpoints, newest first):\n", threadID, len(tuples))
	fmt.Printf("  %4s  %-6s  %-6s  %-7s  %-17s  %7s  %s\n", "step", "source", "run", "id", "parent", "counter", "log")
	for _, t := range tuples {
		parent := "-"
		if t.ParentConfig != nil {
			parent = demo.Short(t.ParentConfig.CheckpointID)
			if !present[t.ParentConfig.CheckpointID] {
				parent += " (gone)"
			}
		}
		logText := "-"
		if snap, ok := t.Checkpoint.ChannelValues["log"].(checkpoint.DeltaSnapshot); ok {
			entries, _ := snap.Value.([]any)
			logText = fmt.Sprintf("snapshot of %d", len(entries))
		}
		fmt.Printf("  %4v  %-6v  %-6v  %-7s  %-17s  %7v  %s\n", t.Metadata["step"], t.Metadata["source"], t.Metadata["run_id"],
			demo.Short(t.Config.CheckpointID), parent, t.Checkpoint.ChannelValues["counter"], logText)
	}
	return nil
}

// listIDs returns the checkpoint IDs of a thread, newest first.
func listIDs(ctx context.Context, saver checkpoint.Saver, threadID string) ([]string, error) {
	var ids []string
	for t, err := range saver.List(ctx, checkpoint.ListQuery{ThreadID: threadID}) {
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", threadID, err)
		}
		ids = append(ids, t.Config.CheckpointID)
	}
	return ids, nil
}

// writes prints pending writes as task=value.
func writes(ws []checkpoint.PendingWrite) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%s %q", w.TaskID, w.Value)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func quoteAll(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
