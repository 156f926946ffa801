package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/graphstate/redcheck/checkpoint"
)

// pruneDoc is the output of "redcheck prune --json".
type pruneDoc struct {
	ThreadID string `json:"thread_id"`
	Keep     int    `json:"keep"`
	Before   int    `json:"before"`  // checkpoints before, every namespace
	After    int    `json:"after"`   // checkpoints after
	Removed  int    `json:"removed"` // Before - After
}

// runPrune is "redcheck prune THREAD --keep 1 --yes": Prune with
// checkpoint.PruneKeepLatest.
func runPrune(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	keep := fs.Int("keep", 1, "checkpoints to keep in each namespace, newest first; the saver's Prune keeps the latest\n"+
		"(checkpoint.PruneKeepLatest, with the ancestors its delta channels need), so 1 is the one value")
	yes := yesFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON document")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck prune THREAD --yes [--keep 1] [--url redis://...] [--cluster] [--prefix P] [--shards N] [--json]")
		fmt.Fprintln(stderr, "\nPrunes a thread's history: each namespace keeps its newest checkpoint (with its pending writes, and")
		fmt.Fprintln(stderr, "the ancestors its delta channels read their seed from); the rest goes. Needs --yes; exits 1 when")
		fmt.Fprintln(stderr, "the thread does not exist.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 1, 1)
	if !ok {
		return code
	}
	thread := pos[0]
	if *keep != 1 {
		fmt.Fprintf(stderr, "redcheck prune: --keep %d: the saver prunes to the latest checkpoint of each namespace, so --keep must be 1\n", *keep)
		return exitUsage
	}
	s, rdb, before, code, ok := openThread(ctx, "prune", tgt, thread, *yes, fmt.Sprintf("prune thread %s to its latest checkpoint", quoteIf(thread)), stderr)
	if !ok {
		return code
	}
	defer rdb.Close()
	doc := pruneDoc{ThreadID: thread, Keep: *keep, Before: before}
	var err error
	if err := s.Prune(ctx, []string{thread}, checkpoint.PruneKeepLatest); err != nil {
		return readError("prune", err, stderr)
	}
	if doc.After, err = countCheckpoints(ctx, s, thread); err != nil {
		return readError("prune", err, stderr)
	}
	doc.Removed = doc.Before - doc.After
	if *asJSON {
		return writeJSON(stdout, doc)
	}
	fmt.Fprintf(stdout, "pruned thread %s: %d checkpoints removed, %d kept\n", quoteIf(thread), doc.Removed, doc.After)
	return exitOK
}
