// Command redcheck inspects the checkpoints that a redissaver.Saver keeps in
// Redis, and follows the events its writes publish.
//
// Usage:
//
//	redcheck <command> [flags]
//	redcheck help
//
// Commands:
//
//	check    verify the stored data of one thread or of every thread
//	tail     print events (checkpoints, writes, deletions...) as they arrive
//	threads  list the threads with their latest checkpoint, newest first
//	history  list the checkpoints of a thread, newest first
//	show     print one checkpoint: values, metadata, pending writes, interrupts
//	diff     print what changed in the channel values between two checkpoints
//	export   write the checkpoints of threads to a file, one JSON object a line
//	import   store the checkpoints of an export file
//	rekey    re-encrypt the stored values under the keyring's current key
//	delete   delete a thread (needs --yes)
//	prune    prune a thread to its latest checkpoint of each namespace (needs --yes)
//	copy     copy a thread to a new one, or fork it at a checkpoint (needs --yes)
//	ui       serve the web UI over the same Redis and prefix
//
// The inspection commands (threads, history, show, diff) only read, and
// print JSON with --json; export writes a file that import stores again.
// import, rekey, delete, prune and copy write to Redis, the last three only
// with --yes (without it they change nothing and exit 2); ui serves a web UI
// that writes only with --allow-writes. Run "redcheck <command> -h" for a
// command's flags; docs/cli.md is the reference. Exit status: 0 when all is
// well, 1 when the command found a problem (check: a violation; import,
// copy: a thread that exists already; rekey: values left that are not under
// the current key) or what it was asked for does not exist (history, show,
// diff, export, delete, prune, copy), 2 for a
// usage error, a bad export file, or when Redis cannot be reached or fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
)

// Exit statuses of every command.
const (
	exitOK    = 0 // done, nothing found
	exitFound = 1 // the command found what it looks for (check: violations)
	exitUsage = 2 // bad usage, or Redis unreachable or failing
)

// command is one subcommand. run gets the arguments after the command name
// and returns the exit status.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is the dispatch table: one line per subcommand, each defined in
// a file of its own named after it (check.go, ...).
var commands = []command{
	{"check", "verify the stored data of one thread or of every thread", runCheck},
	{"tail", "print the events of every write as they arrive", runTail},
	{"threads", "list the threads with their latest checkpoint, newest first", runThreads},
	{"history", "list the checkpoints of a thread, newest first", runHistory},
	{"show", "print one checkpoint: channel values, metadata, pending writes, interrupts", runShow},
	{"diff", "print what changed in the channel values between two checkpoints", runDiff},
	{"export", "write the checkpoints of threads to a file, one JSON object a line", runExport},
	{"import", "store the checkpoints of an export file", runImport},
	{"rekey", "re-encrypt the stored values under the keyring's current key", runRekey},
	{"delete", "delete a thread (needs --yes)", runDelete},
	{"prune", "prune a thread to its latest checkpoint of each namespace (needs --yes)", runPrune},
	{"copy", "copy a thread to a new one, or fork it at a checkpoint (needs --yes)", runCopy},
	{"ui", "serve the web UI: threads, timelines, diffs, interrupts, live", runUI},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to their command and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "redcheck: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: redcheck <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'redcheck <command> -h' for the flags of a command.")
	fmt.Fprintln(w, "Exit status: 0 all well, 1 problems found or not found, 2 usage or connection error.")
}

// parseFlags parses a subcommand's flags, which take no positional
// arguments. ok is false when the subcommand must stop, with code as its
// exit status (exitOK after -h, exitUsage after a bad flag or argument).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "redcheck %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return exitUsage, false
	}
	return exitOK, true
}

// target holds the flags every subcommand shares: where the saver's data is.
type target struct {
	url     *string
	cluster *bool
	prefix  *string
	shards  *int
	keys    *keyFlags // nil for a command that reads no value
}

// withKeys adds the key flags to fs (docs/cli.md, "Keys"), for a command
// that reads or writes values through the saver.
func (t *target) withKeys(fs *flag.FlagSet) {
	t.keys = addKeyFlags(fs, "with keys, read values stored in the clear too (the saver's ReadPlaintext: a prefix\nbeing migrated to encryption at rest)")
}

// encryption sets the saver options of the key flags: Encryption and
// ReadPlaintext.
func (t target) encryption(opts *redissaver.Options) error {
	if t.keys == nil {
		return nil
	}
	ring, err := t.keys.ring()
	if err != nil {
		return err
	}
	opts.Encryption, opts.ReadPlaintext = ring, *t.keys.plain
	return nil
}

// targetFlags defines -url, -cluster, -prefix and -shards on fs.
func targetFlags(fs *flag.FlagSet) target {
	return target{
		url: fs.String("url", envOr("REDIS_URL", "redis://127.0.0.1:6379/0"),
			"Redis URL, redis:// or rediss:// (default $REDIS_URL when set); with -cluster, a cluster URL\n"+
				"such as redis://host1:port?addr=host2:port&addr=host3:port"),
		cluster: fs.Bool("cluster", false, "connect to a Redis Cluster"),
		prefix:  fs.String("prefix", redissaver.DefaultPrefix, "key prefix of the saver (Options.Prefix)"),
		shards:  fs.Int("shards", keys.DefaultShards, "number of shards of the saver (Options.Shards)"),
	}
}
