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

// openThread is the start of a command that changes one existing thread
// (delete, prune) once confirmed: it checks the thread id, asks for --yes
// (what: the change, in words), connects and counts the thread's
// checkpoints. ok is false when the command must end with code; the
// caller closes rdb otherwise.
func openThread(ctx context.Context, name string, tgt target, thread string, yes bool, what string, stderr io.Writer) (
	s *redissaver.Saver, rdb io.Closer, n int, code int, ok bool) {
	if err := validateAddress(thread, ""); err != nil {
		fmt.Fprintf(stderr, "redcheck %s: %v\n", name, err)
		return nil, nil, 0, exitUsage, false
	}
	if !confirmed(name, yes, what, stderr) {
		return nil, nil, 0, exitUsage, false
	}
	s, client, empty, code, ok := openSaver(ctx, name, tgt, stderr)
	if !ok {
		return nil, nil, 0, code, false
	}
	fail := func(err error) (*redissaver.Saver, io.Closer, int, int, bool) {
		client.Close()
		return nil, nil, 0, readError(name, err, stderr), false
	}
	if empty {
		return fail(notFound(thread))
	}
	n, err := countCheckpoints(ctx, s, thread)
	if err != nil {
		return fail(err)
	}
	if n == 0 {
		return fail(notFound(thread))
	}
	return s, client, n, exitOK, true
}
