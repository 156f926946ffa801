package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
)

// filterFlag is the repeatable --filter k=v: a metadata filter. A value
// that parses as JSON is that JSON value (step=3 is the number 3,
// ok=true a boolean), any other is a string (source=loop).
type filterFlag checkpoint.Metadata

func (f filterFlag) String() string {
	parts := make([]string, 0, len(f))
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, k+"="+compactJSON(plain(f[k])))
	}
	return strings.Join(parts, ",")
}

func (f filterFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	var val any
	if err := json.Unmarshal([]byte(v), &val); err != nil {
		val = v
	}
	f[k] = val
	return nil
}

// threadRow is one thread of "redcheck threads --json".
type threadRow struct {
	ThreadID     string   `json:"thread_id"`
	CheckpointID string   `json:"checkpoint_id"`
	Step         *int64   `json:"step"`
	Source       string   `json:"source"`
	TS           string   `json:"ts"`
	Time         string   `json:"time,omitempty"`
	AgeSeconds   *float64 `json:"age_seconds"`
	Bytes        int      `json:"bytes"`
	Channels     int      `json:"channels"`
	Writes       int      `json:"pending_writes"`
}

// threadsDoc is the output of "redcheck threads --json".
type threadsDoc struct {
	Threads []threadRow `json:"threads"`
}

// runThreads is "redcheck threads": the threads of the saver with their
// latest checkpoint (of the root graph), newest first.
func runThreads(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("threads", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	since := fs.Duration("since", 0, "only threads whose latest checkpoint is at most this old (default: any age)")
	filter := filterFlag{}
	fs.Var(filter, "filter", "only checkpoints whose metadata has key=value (repeatable; a value that parses as JSON is that\n"+
		"JSON value, step=3 the number 3, else a string); a thread is listed with its latest checkpoint that matches")
	limit := fs.Int("limit", 50, "list at most this many threads (0: no limit)")
	asJSON := fs.Bool("json", false, "print one JSON document")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck threads [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--since D] [--filter k=v ...] [--limit N] [--json]")
		fmt.Fprintln(stderr, "\nLists the threads with their latest checkpoint of the root graph, newest first: step, source,")
		fmt.Fprintln(stderr, "checkpoint ID, size of its values and age.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if _, code, ok := parseArgs(fs, args, stderr, 0, 0); !ok {
		return code
	}
	if *limit < 0 || *since < 0 {
		fmt.Fprintln(stderr, "redcheck threads: --limit and --since must not be negative")
		return exitUsage
	}
	s, rdb, empty, code, ok := openSaver(ctx, "threads", tgt, stderr)
	if !ok {
		return code
	}
	defer rdb.Close()

	doc := threadsDoc{Threads: []threadRow{}}
	if !empty {
		// List merges the threads newest ID first: the first checkpoint of
		// a thread met is its latest. Every later one of that thread is
		// skipped; the listing ends once limit threads are found.
		q := checkpoint.ListQuery{CheckpointNS: checkpoint.NS("")}
		if len(filter) > 0 {
			q.Filter = checkpoint.Metadata(filter)
		}
		cutoff := time.Time{}
		if *since > 0 {
			cutoff = clock().Add(-*since)
		}
		seen := map[string]bool{}
		for t, err := range s.List(ctx, q) {
			if err != nil {
				return readError("threads", err, stderr)
			}
			th := t.Config.ThreadID
			if seen[th] {
				continue
			}
			seen[th] = true
			at, known := checkpointTime(t.Checkpoint)
			if !cutoff.IsZero() && (!known || at.Before(cutoff)) {
				continue
			}
			row := threadRow{
				ThreadID: th, CheckpointID: t.Config.CheckpointID, Step: stepPtr(t.Metadata), Source: metaSource(t.Metadata),
				TS: t.Checkpoint.TS, Bytes: valuesSize(t.Checkpoint.ChannelValues), Channels: len(t.Checkpoint.ChannelVersions),
				Writes: len(t.PendingWrites),
			}
			row.Time, row.AgeSeconds = timeFields(t.Checkpoint)
			doc.Threads = append(doc.Threads, row)
			if *limit > 0 && len(doc.Threads) >= *limit {
				break
			}
		}
	}
	if *asJSON {
		return writeJSON(stdout, doc)
	}
	if len(doc.Threads) == 0 {
		fmt.Fprintln(stdout, "no threads")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "THREAD\tSTEP\tSOURCE\tCHECKPOINT\tSIZE\tWRITES\tAGE")
	for _, r := range doc.Threads {
		step := "-"
		if r.Step != nil {
			step = fmt.Sprint(*r.Step)
		}
		var at time.Time
		if r.Time != "" {
			at, _ = time.Parse(time.RFC3339Nano, r.Time)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", quoteIf(r.ThreadID), step, orDash(r.Source), r.CheckpointID,
			humanBytes(r.Bytes), r.Writes, age(at, r.Time != ""))
	}
	if err := tw.Flush(); err != nil {
		return exitUsage
	}
	return exitOK
}
