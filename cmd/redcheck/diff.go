package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
)

// runDiff is "redcheck diff THREAD A [B]": what changed from checkpoint B
// (A's parent by default) to checkpoint A.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	ns := fs.String("ns", "", "checkpoint namespace (default: the root graph)")
	asJSON := fs.Bool("json", false, "print an RFC 6902 JSON Patch that turns B's channel values into A's")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck diff THREAD A [B] [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--ns NS] [--json]")
		fmt.Fprintln(stderr, "\nPrints what changed in the channel values from checkpoint B (default: A's parent) to checkpoint A:")
		fmt.Fprintln(stderr, "each channel added, removed or changed, with its old and new value. Exits 1 when A or B does not exist.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 2, 3)
	if !ok {
		return code
	}
	thread := pos[0]
	if err := validateAddress(thread, *ns); err != nil {
		fmt.Fprintf(stderr, "redcheck diff: %v\n", err)
		return exitUsage
	}
	s, rdb, empty, code, ok := openSaver(ctx, "diff", tgt, stderr)
	if !ok {
		return code
	}
	defer rdb.Close()
	if empty {
		return readError("diff", fmt.Errorf("thread %q: %w", thread, checkpoint.ErrNotFound), stderr)
	}
	a, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: thread, CheckpointNS: *ns, CheckpointID: pos[1]})
	if err != nil {
		return readError("diff", err, stderr)
	}
	bID := parentID(a)
	if len(pos) == 3 {
		bID = pos[2]
	}
	var b *checkpoint.Tuple // nil: A is a root checkpoint, compared with nothing
	if bID != "" {
		if b, err = s.GetTuple(ctx, checkpoint.Config{ThreadID: thread, CheckpointNS: *ns, CheckpointID: bID}); err != nil {
			return readError("diff", err, stderr)
		}
	}
	from, to := map[string]any{}, map[string]any{}
	if b != nil {
		from = plain(b.Checkpoint.ChannelValues).(map[string]any)
	}
	if a.Checkpoint.ChannelValues != nil {
		to = plain(a.Checkpoint.ChannelValues).(map[string]any)
	}
	if *asJSON {
		return writeJSON(stdout, inspect.Patch(from, to))
	}
	printDiff(stdout, b, a, from, to)
	return exitOK
}

// printDiff writes the human format of diff: a header naming both
// checkpoints, then one entry per channel that differs, in channel order:
// "+ name" (added) with its new value, "- name" (removed) with its old one,
// "~ name" (changed) with both, each value on lines of its own behind
// "  - " or "  + ". A changed channel whose old and new values are both
// objects lists the members that changed instead, one a line, by their
// JSON Pointer within the channel: "  + /key: new", "  - /key: old",
// "  ~ /key: old -> new".
func printDiff(w io.Writer, b, a *checkpoint.Tuple, from, to map[string]any) {
	label := func(t *checkpoint.Tuple) string {
		if t == nil {
			return "(nothing: A has no parent)"
		}
		return fmt.Sprintf("%s (step %s, %s)", t.Config.CheckpointID, stepText(t.Metadata), orDash(metaSource(t.Metadata)))
	}
	fmt.Fprintf(w, "--- %s\n", label(b))
	fmt.Fprintf(w, "+++ %s\n", label(a))
	value := func(sign string, v any) {
		for _, line := range strings.Split(prettyJSON(v, ""), "\n") {
			fmt.Fprintf(w, "  %s %s\n", sign, line)
		}
	}
	changes, same := inspect.Diff(from, to)
	for _, c := range changes {
		switch c.Kind {
		case inspect.Added:
			fmt.Fprintf(w, "+ %s\n", quoteIf(c.Channel))
			value("+", c.New)
		case inspect.Removed:
			fmt.Fprintf(w, "- %s\n", quoteIf(c.Channel))
			value("-", c.Old)
		default:
			fmt.Fprintf(w, "~ %s\n", quoteIf(c.Channel))
			if c.Members == nil {
				value("-", c.Old)
				value("+", c.New)
				continue
			}
			for _, op := range c.Members {
				switch op.Op {
				case "add":
					fmt.Fprintf(w, "  + %s: %s\n", op.Path, compactJSON(op.Value))
				case "remove":
					fmt.Fprintf(w, "  - %s: %s\n", op.Path, compactJSON(pointerGet(c.Old, op.Path)))
				default:
					fmt.Fprintf(w, "  ~ %s: %s -> %s\n", op.Path, compactJSON(pointerGet(c.Old, op.Path)), compactJSON(op.Value))
				}
			}
		}
	}
	fmt.Fprintf(w, "channels: %d changed, %d unchanged\n", len(changes), same)
}

// The diff logic lives in internal/inspect, shared with the UI.
type patchOp = inspect.PatchOp

var pointerGet = inspect.PointerGet
