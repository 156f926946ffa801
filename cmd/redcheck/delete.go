package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// deleteDoc is the output of "redcheck delete --json".
type deleteDoc struct {
	ThreadID    string `json:"thread_id"`
	Checkpoints int    `json:"checkpoints"` // how many it had, every namespace
}

// runDelete is "redcheck delete THREAD --yes": DeleteThread, every
// namespace.
func runDelete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	yes := yesFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON document")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck delete THREAD --yes [--url redis://...] [--cluster] [--prefix P] [--shards N] [--json]")
		fmt.Fprintln(stderr, "\nDeletes a thread: every checkpoint of every namespace, its pending writes and values. Needs --yes;")
		fmt.Fprintln(stderr, "exits 1 when the thread does not exist.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 1, 1)
	if !ok {
		return code
	}
	thread := pos[0]
	s, rdb, n, code, ok := openThread(ctx, "delete", tgt, thread, *yes, fmt.Sprintf("delete thread %s", quoteIf(thread)), stderr)
	if !ok {
		return code
	}
	defer rdb.Close()
	if err := s.DeleteThread(ctx, thread); err != nil {
		return readError("delete", err, stderr)
	}
	if *asJSON {
		return writeJSON(stdout, deleteDoc{ThreadID: thread, Checkpoints: n})
	}
	fmt.Fprintf(stdout, "deleted thread %s (%d checkpoints)\n", quoteIf(thread), n)
	return exitOK
}
