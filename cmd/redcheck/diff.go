package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
)

// patchOp is one operation of an RFC 6902 JSON Patch.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// runDiff is "redcheck diff THREAD A [B]": what changed from checkpoint B
// (A's parent by default) to checkpoint A.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	ns := fs.String("ns", "", "checkpoint namespace (default: the root graph)")
	asJSON := fs.Bool("json", false, "print an RFC 6902 JSON Patch that turns B's channel values into A's")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck diff THREAD A [B] [--url redis://...] [--cluster] [--prefix P] [--shards N] [--ns NS] [--json]")
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
		ops := []patchOp{}
		jsonPatch("", from, to, &ops)
		return writeJSON(stdout, ops)
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
	names := map[string]bool{}
	for k := range from {
		names[k] = true
	}
	for k := range to {
		names[k] = true
	}
	same := 0
	for _, k := range sortedKeys(names) {
		old, inFrom := from[k]
		cur, inTo := to[k]
		switch {
		case inFrom && inTo && reflect.DeepEqual(old, cur):
			same++
		case !inFrom:
			fmt.Fprintf(w, "+ %s\n", quoteIf(k))
			value("+", cur)
		case !inTo:
			fmt.Fprintf(w, "- %s\n", quoteIf(k))
			value("-", old)
		default:
			fmt.Fprintf(w, "~ %s\n", quoteIf(k))
			_, objOld := old.(map[string]any)
			_, objCur := cur.(map[string]any)
			if !objOld || !objCur {
				value("-", old)
				value("+", cur)
				continue
			}
			var ops []patchOp
			jsonPatch("", old, cur, &ops)
			for _, op := range ops {
				switch op.Op {
				case "add":
					fmt.Fprintf(w, "  + %s: %s\n", op.Path, compactJSON(op.Value))
				case "remove":
					fmt.Fprintf(w, "  - %s: %s\n", op.Path, compactJSON(pointerGet(old, op.Path)))
				default:
					fmt.Fprintf(w, "  ~ %s: %s -> %s\n", op.Path, compactJSON(pointerGet(old, op.Path)), compactJSON(op.Value))
				}
			}
		}
	}
	fmt.Fprintf(w, "channels: %d changed, %d unchanged\n", len(names)-same, same)
}

// pointerGet returns the member of v at the JSON Pointer path, through
// objects only (the paths jsonPatch makes); nil when there is none.
func pointerGet(v any, path string) any {
	if path == "" {
		return v
	}
	for _, tok := range strings.Split(path[1:], "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	return v
}

// jsonPatch appends to ops the operations that turn from into to, at path:
// objects are compared key by key (recursively), any other pair of
// different values is one replace. Keys are visited in byte order, so the
// patch is a function of its inputs.
func jsonPatch(path string, from, to any, ops *[]patchOp) {
	if reflect.DeepEqual(from, to) {
		return
	}
	fm, ok1 := from.(map[string]any)
	tm, ok2 := to.(map[string]any)
	if !ok1 || !ok2 {
		*ops = append(*ops, patchOp{Op: "replace", Path: path, Value: nullable(to)})
		return
	}
	for _, k := range sortedKeys(fm) {
		if _, ok := tm[k]; !ok {
			*ops = append(*ops, patchOp{Op: "remove", Path: path + "/" + pointerToken(k)})
		}
	}
	for _, k := range sortedKeys(tm) {
		p := path + "/" + pointerToken(k)
		if old, ok := fm[k]; ok {
			jsonPatch(p, old, tm[k], ops)
		} else {
			*ops = append(*ops, patchOp{Op: "add", Path: p, Value: nullable(tm[k])})
		}
	}
}

// jsonNull is a value that encodes as JSON null even under omitempty: a
// patch operation's "value" is required for add and replace.
type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

func nullable(v any) any {
	if v == nil {
		return jsonNull{}
	}
	return v
}

// pointerToken escapes a key for a JSON Pointer (RFC 6901).
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
