package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// runImport is "redcheck import FILE": it stores the checkpoints of an
// export. The whole file is checked before anything is written; a thread
// that exists is refused (exit 1) unless --replace, which deletes it first.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	replace := fs.Bool("replace", false, "delete each thread of the file that exists (DeleteThread, every namespace) before importing it")
	compress := fs.Bool("compress", false, "store large values compressed (Options.Compression, default sizes); values are stored plain without it")
	ttl := fs.Duration("ttl", 0, "the saver's Options.TTL, if any: each imported thread gets a lease of this long")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck import FILE [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--replace] [--compress] [--ttl D]")
		fmt.Fprintln(stderr, "\nStores the checkpoints of a file written by redcheck export. The whole file is checked")
		fmt.Fprintln(stderr, "first (exit 2 on a bad line, nothing written). A thread that exists is refused (exit 1,")
		fmt.Fprintln(stderr, "nothing written) unless --replace, which deletes it first.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 1, 1)
	if !ok {
		return code
	}
	path := pos[0]
	if *ttl < 0 {
		fmt.Fprintln(stderr, "redcheck import: --ttl must not be negative")
		return exitUsage
	}

	// First pass: the whole file must be sound before anything is written.
	threads, total, err := scanExport(path, nil)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck import: %v\n", err)
		return exitUsage
	}

	rdb, ok := dial(ctx, "import", tgt, stderr)
	if !ok {
		return exitUsage
	}
	defer rdb.Close()
	opts := redissaver.Options{AcceptEviction: true, Prefix: *tgt.prefix, Shards: *tgt.shards, Serializer: passthrough{}, TTL: *ttl}
	opts.Compression.Enabled = *compress
	if err := tgt.encryption(&opts); err != nil {
		fmt.Fprintf(stderr, "redcheck import: %v\n", err)
		return exitUsage
	}
	s, err := redissaver.New(ctx, rdb, opts)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck import: %v\n", err)
		return exitUsage
	}

	var existing []string
	for _, th := range threads {
		for t, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th, Limit: 1}) {
			if err != nil {
				return readError("import", err, stderr)
			}
			if t != nil {
				existing = append(existing, th)
			}
		}
	}
	if len(existing) > 0 && !*replace {
		fmt.Fprintf(stderr, "redcheck import: %d of the file's threads exist already: %s; nothing imported (--replace deletes them first)\n",
			len(existing), strings.Join(quoteAll(existing), " "))
		return exitFound
	}
	for _, th := range existing {
		if err := s.DeleteThread(ctx, th); err != nil {
			fmt.Fprintf(stderr, "redcheck import: delete thread %q: %v\n", th, err)
			return exitUsage
		}
	}

	writes := 0
	_, n, err := scanExport(path, func(l *exportLine) error {
		md, err := decodeMetadata(l.Metadata)
		if err != nil {
			return err
		}
		c := l.Checkpoint
		cp := checkpoint.Checkpoint{
			V: c.V, ID: c.ID, TS: c.TS, ChannelVersions: c.ChannelVersions, VersionsSeen: c.VersionsSeen, UpdatedChannels: c.UpdatedChannels,
			ChannelValues: make(map[string]any, len(l.Values)),
		}
		for ch, v := range l.Values {
			cp.ChannelValues[ch] = v
		}
		cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: l.ThreadID, CheckpointNS: l.CheckpointNS, CheckpointID: c.ParentID}, cp, md, l.NewVersions)
		if err != nil {
			return err
		}
		calls, err := writeCalls(l.PendingWrites)
		if err != nil {
			return err
		}
		for _, call := range calls {
			if err := s.PutWrites(ctx, cfg, call.writes, call.taskID, call.taskPath); err != nil {
				return err
			}
		}
		writes += len(l.PendingWrites)
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "redcheck import: %v (the lines before it are imported; run the import again with --replace)\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "imported %d threads, %d checkpoints, %d pending writes", len(threads), n, writes)
	if len(existing) > 0 {
		fmt.Fprintf(stdout, " (%d threads replaced)", len(existing))
	}
	fmt.Fprintln(stdout)
	if n != total {
		fmt.Fprintf(stderr, "redcheck import: %s changed during the import: %d checkpoints, %d at first\n", path, n, total)
		return exitUsage
	}
	return exitOK
}

// scanExport reads the export at path: its header, its checkpoint lines
// (each given to fn when fn is not nil) and its end line. It returns the
// threads of the file, in their order, and the number of checkpoints. An
// error names the line.
func scanExport(path string, fn func(l *exportLine) error) (threads []string, n int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	lr := &lineReader{r: bufio.NewReaderSize(f, 1<<16)}
	at := func(err error) error { return fmt.Errorf("%s:%d: %w", path, lr.n, err) }
	line, err := lr.next()
	if errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("%s: empty file, not a redcheck export", path)
	}
	if err != nil {
		return nil, 0, err
	}
	if err := parseHeader(line); err != nil {
		return nil, 0, at(err)
	}
	seenThread := map[string]bool{}
	seen := map[[3]string]bool{}
	var end *exportEnd
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		if end != nil {
			return nil, 0, at(errors.New("a line after the end line"))
		}
		l, e, err := parseBody(line)
		if err != nil {
			return nil, 0, at(err)
		}
		if e != nil {
			if e.Checkpoints != n {
				return nil, 0, at(fmt.Errorf("the end line counts %d checkpoints, the file holds %d", e.Checkpoints, n))
			}
			end = e
			continue
		}
		k := [3]string{l.ThreadID, l.CheckpointNS, l.Checkpoint.ID}
		if seen[k] {
			return nil, 0, at(fmt.Errorf("checkpoint %s of thread %q namespace %q comes twice", l.Checkpoint.ID, l.ThreadID, l.CheckpointNS))
		}
		seen[k] = true
		if !seenThread[l.ThreadID] {
			seenThread[l.ThreadID] = true
			threads = append(threads, l.ThreadID)
		}
		if fn != nil {
			if err := fn(l); err != nil {
				return nil, 0, at(err)
			}
		}
		n++
	}
	if end == nil {
		return nil, 0, fmt.Errorf("%s:%d: no end line: the file is cut short", path, lr.n)
	}
	return threads, n, nil
}
