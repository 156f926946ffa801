package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
)

// copyDoc is the output of "redcheck copy --json".
type copyDoc struct {
	Source       string `json:"source_thread_id"`
	Target       string `json:"target_thread_id"`
	At           string `json:"at,omitempty"`         // the checkpoint forked from, with --at
	Checkpoints  int    `json:"checkpoints"`          // the target's, every namespace
	CheckpointID string `json:"latest_checkpoint_id"` // the target's latest (the fork with --at)
}

// runCopy is "redcheck copy THREAD NEWTHREAD [--at ID] --yes": CopyThread,
// and with --at a fork of that checkpoint on the copy (inspect.Fork).
func runCopy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	at := fs.String("at", "", "fork at this checkpoint (of the root graph): the copy gets a new latest checkpoint with its state")
	yes := yesFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON document")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck copy THREAD NEWTHREAD --yes [--at CHECKPOINT_ID] [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--json]")
		fmt.Fprintln(stderr, "\nCopies a thread with its whole history (every namespace, pending writes, values) to a new thread.")
		fmt.Fprintln(stderr, "With --at, the copy then gets a new latest checkpoint (source \"fork\") holding that checkpoint's")
		fmt.Fprintln(stderr, "state, as a branch of it: a run on the new thread resumes from there. Needs --yes; exits 1 when the")
		fmt.Fprintln(stderr, "thread or checkpoint does not exist or NEWTHREAD has checkpoints.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 2, 2)
	if !ok {
		return code
	}
	source, target := pos[0], pos[1]
	for _, th := range pos {
		if err := validateAddress(th, ""); err != nil {
			fmt.Fprintf(stderr, "redcheck copy: %v\n", err)
			return exitUsage
		}
	}
	if source == target {
		fmt.Fprintln(stderr, "redcheck copy: THREAD and NEWTHREAD are the same")
		return exitUsage
	}
	what := fmt.Sprintf("copy thread %s to %s", quoteIf(source), quoteIf(target))
	if *at != "" {
		what += " and fork it at " + *at
	}
	if !confirmed("copy", *yes, what, stderr) {
		return exitUsage
	}
	s, rdb, empty, code, ok := openSaver(ctx, "copy", tgt, stderr)
	if !ok {
		return code
	}
	defer rdb.Close()
	if empty {
		return readError("copy", notFound(source), stderr)
	}
	exists, err := threadExists(ctx, s, target)
	if err != nil {
		return readError("copy", err, stderr)
	}
	if exists {
		fmt.Fprintf(stderr, "redcheck copy: thread %s has checkpoints: copy to a new thread, or delete it first\n", quoteIf(target))
		return exitFound
	}
	if ok, err := threadExists(ctx, s, source); err != nil || !ok {
		if err == nil {
			err = notFound(source)
		}
		return readError("copy", err, stderr)
	}
	latest, err := inspect.Fork(ctx, s, source, target, *at)
	if err != nil {
		if errors.Is(err, checkpoint.ErrInvalidConfig) { // the target was written meanwhile
			fmt.Fprintf(stderr, "redcheck copy: %v\n", err)
			return exitFound
		}
		return readError("copy", err, stderr)
	}
	doc := copyDoc{Source: source, Target: target, At: *at, CheckpointID: latest.CheckpointID}
	if doc.Checkpoints, err = countCheckpoints(ctx, s, target); err != nil {
		return readError("copy", err, stderr)
	}
	if *asJSON {
		return writeJSON(stdout, doc)
	}
	if *at != "" {
		fmt.Fprintf(stdout, "copied thread %s to %s (%d checkpoints) and forked it at %s: latest checkpoint %s\n",
			quoteIf(source), quoteIf(target), doc.Checkpoints, *at, doc.CheckpointID)
		return exitOK
	}
	fmt.Fprintf(stdout, "copied thread %s to %s (%d checkpoints): latest checkpoint %s\n",
		quoteIf(source), quoteIf(target), doc.Checkpoints, doc.CheckpointID)
	return exitOK
}
