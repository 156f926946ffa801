package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// This file holds what the writing commands (delete, prune, copy) share:
// each changes Redis only with --yes, and reads what it reports.

// yesFlag defines --yes on fs: the explicit confirmation a writing command
// needs.
func yesFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("yes", false, "confirm the change: without it the command changes nothing and exits 2")
}

// confirmed reports whether --yes was given; when not, it says so and the
// command must exit with exitUsage before connecting.
func confirmed(name string, yes bool, what string, stderr io.Writer) bool {
	if !yes {
		fmt.Fprintf(stderr, "redcheck %s: would %s; nothing changed: add --yes to confirm\n", name, what)
	}
	return yes
}

// countCheckpoints returns how many checkpoints a thread has, in every
// namespace (0 when it does not exist). It reads them page by page.
func countCheckpoints(ctx context.Context, s *redissaver.Saver, thread string) (int, error) {
	n := 0
	for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: thread}) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// threadExists reports whether a thread has a checkpoint in any namespace.
func threadExists(ctx context.Context, s *redissaver.Saver, thread string) (bool, error) {
	for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: thread, Limit: 1}) {
		if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// notFound is the error of a thread that does not exist.
func notFound(thread string) error {
	return fmt.Errorf("thread %q has no checkpoints: %w", thread, checkpoint.ErrNotFound)
}
