package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
)

// historyRow is one checkpoint of "redcheck history --json".
type historyRow struct {
	CheckpointID string   `json:"checkpoint_id"`
	ParentID     string   `json:"parent_id"`
	Step         *int64   `json:"step"`
	Source       string   `json:"source"`
	TS           string   `json:"ts"`
	Time         string   `json:"time,omitempty"`
	AgeSeconds   *float64 `json:"age_seconds"`
	Writes       int      `json:"pending_writes"`
	// Changed lists the channels whose version differs from the parent's
	// (added, removed or moved on); nil when the parent cannot be read.
	Changed []string `json:"changed"`
	Bytes   int      `json:"bytes"`
}

// historyDoc is the output of "redcheck history --json".
type historyDoc struct {
	ThreadID     string       `json:"thread_id"`
	CheckpointNS string       `json:"checkpoint_ns"`
	Checkpoints  []historyRow `json:"checkpoints"`
}

// runHistory is "redcheck history THREAD": the checkpoints of a thread's
// namespace, newest first.
func runHistory(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	ns := fs.String("ns", "", "checkpoint namespace (default: the root graph)")
	limit := fs.Int("limit", 50, "list at most this many checkpoints (0: no limit)")
	asJSON := fs.Bool("json", false, "print one JSON document")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck history THREAD [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--ns NS] [--limit N] [--json]")
		fmt.Fprintln(stderr, "\nLists the checkpoints of a thread, newest first: step, source, ID, parent, number of pending")
		fmt.Fprintln(stderr, "writes, channels changed from the parent, size of the values. Exits 1 when the thread has none.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 1, 1)
	if !ok {
		return code
	}
	thread := pos[0]
	if err := validateAddress(thread, *ns); err != nil {
		fmt.Fprintf(stderr, "redcheck history: %v\n", err)
		return exitUsage
	}
	if *limit < 0 {
		fmt.Fprintln(stderr, "redcheck history: --limit must not be negative")
		return exitUsage
	}
	s, rdb, empty, code, ok := openSaver(ctx, "history", tgt, stderr)
	if !ok {
		return code
	}
	defer rdb.Close()
	if empty {
		return readError("history", fmt.Errorf("thread %q: %w", thread, checkpoint.ErrNotFound), stderr)
	}

	var tuples []*checkpoint.Tuple
	byID := map[string]*checkpoint.Tuple{}
	for t, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: thread, CheckpointNS: checkpoint.NS(*ns), Limit: *limit}) {
		if err != nil {
			return readError("history", err, stderr)
		}
		tuples = append(tuples, t)
		byID[t.Config.CheckpointID] = t
	}
	if len(tuples) == 0 {
		return readError("history", fmt.Errorf("thread %q namespace %q has no checkpoints: %w", thread, *ns, checkpoint.ErrNotFound), stderr)
	}
	doc := historyDoc{ThreadID: thread, CheckpointNS: *ns, Checkpoints: make([]historyRow, 0, len(tuples))}
	for _, t := range tuples {
		row := historyRow{
			CheckpointID: t.Config.CheckpointID, ParentID: parentID(t), Step: stepPtr(t.Metadata), Source: metaSource(t.Metadata),
			TS: t.Checkpoint.TS, Writes: len(t.PendingWrites), Bytes: valuesSize(t.Checkpoint.ChannelValues),
		}
		row.Time, row.AgeSeconds = timeFields(t.Checkpoint)
		var parentVersions map[string]string
		known := true
		if id := row.ParentID; id != "" {
			p := byID[id]
			if p == nil { // beyond the limit, or on another branch
				var err error
				p, err = s.GetTuple(ctx, checkpoint.Config{ThreadID: thread, CheckpointNS: *ns, CheckpointID: id})
				switch {
				case errors.Is(err, checkpoint.ErrNotFound):
					known = false // the parent was pruned or deleted
				case err != nil:
					return readError("history", err, stderr)
				default:
					byID[id] = p
				}
			}
			if p != nil {
				parentVersions = p.Checkpoint.ChannelVersions
			}
		}
		if known {
			row.Changed = changedChannels(parentVersions, t.Checkpoint.ChannelVersions)
		}
		doc.Checkpoints = append(doc.Checkpoints, row)
	}
	if *asJSON {
		return writeJSON(stdout, doc)
	}
	fmt.Fprintf(stdout, "thread %s namespace %s: %d checkpoints, newest first\n", quoteIf(thread), quoteIf(*ns), len(doc.Checkpoints))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSOURCE\tCHECKPOINT\tPARENT\tWRITES\tSIZE\tAGE\tCHANGED")
	for _, r := range doc.Checkpoints {
		step := "-"
		if r.Step != nil {
			step = fmt.Sprint(*r.Step)
		}
		changed := "?"
		if r.Changed != nil {
			changed = strings.Join(quoteAll(r.Changed), " ")
		}
		t, ok := checkpointTime(checkpoint.Checkpoint{ID: r.CheckpointID, TS: r.TS})
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", step, orDash(r.Source), r.CheckpointID, orDash(r.ParentID),
			r.Writes, humanBytes(r.Bytes), age(t, ok), orDash(changed))
	}
	if err := tw.Flush(); err != nil {
		return exitUsage
	}
	return exitOK
}

// changedChannels returns the channels whose version differs between a
// parent's versions and a child's (added, removed or changed), sorted;
// never nil.
func changedChannels(parent, child map[string]string) []string {
	out := []string{}
	for _, c := range slices.Sorted(maps.Keys(child)) {
		if pv, ok := parent[c]; !ok || pv != child[c] {
			out = append(out, c)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(parent)) {
		if _, ok := child[c]; !ok {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// validateAddress checks a thread ID and a namespace as the saver does, so
// that a bad one is a usage error (exit 2).
func validateAddress(thread, ns string) error {
	if thread == "" {
		return fmt.Errorf("empty thread ID")
	}
	if err := keys.ValidateThreadID(thread); err != nil {
		return err
	}
	return keys.ValidateNamespace(ns)
}
