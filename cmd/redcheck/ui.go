package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"

	"github.com/graphstate/redcheck/internal/ui"
	"github.com/graphstate/redcheck/redissaver"
)

// runUI is "redcheck ui": the web UI (internal/ui) over the target, until
// interrupted.
func runUI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (port 0 picks a free one); the UI has no login: keep it on loopback")
	tgt.withKeys(fs)
	allowWrites := fs.Bool("allow-writes", false, "let the UI fork (copy), delete and prune threads, each after a confirmation;\n"+
		"without it the UI only reads, and its API answers writes 403")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck ui [--addr 127.0.0.1:8080] [--allow-writes] [--key ID=FILE ...] [--url redis://...] [--cluster] [--prefix P] [--shards N]")
		fmt.Fprintln(stderr, "\nServes a web UI over the saver's data: threads (search, filters by run ID and metadata), each")
		fmt.Fprintln(stderr, "thread's timeline and branch tree, checkpoint states, diffs, the threads waiting on an interrupt,")
		fmt.Fprintln(stderr, "all live. It starts even when Redis cannot be reached or the prefix holds no data, and says so")
		fmt.Fprintln(stderr, "on the page. Runs until interrupted (Ctrl-C).")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	var keyed redissaver.Options
	if err := tgt.encryption(&keyed); err != nil {
		fmt.Fprintf(stderr, "redcheck ui: %v\n", err)
		return exitUsage
	}
	rdb, err := connect(*tgt.url, *tgt.cluster)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck ui: %v\n", err)
		return exitUsage
	}
	defer rdb.Close()
	srv, err := ui.New(rdb, ui.Options{Prefix: *tgt.prefix, Shards: *tgt.shards, AllowWrites: *allowWrites,
		Encryption: keyed.Encryption, ReadPlaintext: keyed.ReadPlaintext, Logger: log.New(stderr, "", log.LstdFlags)})
	if err != nil {
		fmt.Fprintf(stderr, "redcheck ui: %v\n", err)
		return exitUsage
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		fmt.Fprintf(stderr, "redcheck ui: cannot reach Redis at %s yet: %v (the page says so until it can)\n", redactURL(*tgt.url), err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck ui: %v\n", err)
		return exitUsage
	}
	mode := "read-only"
	if *allowWrites {
		mode = "writes allowed"
	}
	fmt.Fprintf(stdout, "redcheck ui: %s prefix %q, %s\nserving http://%s/ (Ctrl-C stops)\n", redactURL(*tgt.url), *tgt.prefix, mode, ln.Addr())
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "redcheck ui: %v\n", err)
		return exitUsage
	}
	return exitOK
}
