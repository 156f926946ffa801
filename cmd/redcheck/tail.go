package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/stream"
)

// runTail is "redcheck tail": it follows the events a saver publishes and
// prints each as it arrives, one line each, until ctx ends (SIGINT). Exit
// status 0 when stopped, 2 on a usage error, when Redis cannot be reached
// at the start, or when the prefix was written with another shard count
// (or storage format) than --shards; later Redis errors are printed and the
// subscription reconnects. A gap (events Redis no longer holds) is a line
// of the output, in order, like an event.
func runTail(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tail", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	thread := fs.String("thread", "", "follow this thread only (default: every thread)")
	from := fs.String("from", "", "where to start: empty for new events, \"beginning\" for the oldest Redis holds,\n"+
		"an RFC 3339 time, or the cursor of an event printed with -json (resumes right after it)")
	asJSON := fs.Bool("json", false, "print one JSON object per event and line")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck tail [--url redis://...] [--cluster] [--prefix P] [--shards N] [--thread T] [--from beginning|TIME|CURSOR] [--json]")
		fmt.Fprintln(stderr, "\nPrints the events of every write (checkpoints, pending writes, deletions, copies,")
		fmt.Fprintln(stderr, "prunes) as they arrive, until interrupted.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	rdb, err := connect(*tgt.url, *tgt.cluster)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck tail: %v\n", err)
		return exitUsage
	}
	defer rdb.Close()
	sub, err := stream.New(rdb, stream.Options{Prefix: *tgt.prefix, Shards: *tgt.shards})
	if err != nil {
		fmt.Fprintf(stderr, "redcheck tail: %v\n", err)
		return exitUsage
	}
	q := stream.Query{ThreadID: *thread}
	if err := startAt(sub, &q, *from); err != nil {
		fmt.Fprintf(stderr, "redcheck tail: %v\n", err)
		return exitUsage
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		if ctx.Err() != nil {
			return exitOK
		}
		fmt.Fprintf(stderr, "redcheck tail: cannot reach Redis at %s: %v\n", redactURL(*tgt.url), err)
		return exitUsage
	}

	// The subscription blocks in Redis; it runs in a goroutine so that ctx
	// ending stops the command at once.
	type item struct {
		ev  stream.Event
		err error
	}
	items := make(chan item)
	go func() {
		for ev, err := range sub.Subscribe(ctx, q) {
			select {
			case items <- item{ev, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case it := <-items:
			if errors.Is(it.err, checkpoint.ErrInvalidConfig) {
				// Another shard count or storage format than the prefix's:
				// the subscription ended; nothing would ever arrive.
				fmt.Fprintf(stderr, "redcheck tail: %v\n", it.err)
				return exitUsage
			}
			if it.err != nil && !errors.Is(it.err, stream.ErrGap) {
				fmt.Fprintf(stderr, "redcheck tail: %v\n", it.err)
				continue
			}
			// A gap is a line of the output, where the events went missing.
			line := formatEvent(it.ev)
			if *asJSON {
				line = eventLine(it.ev)
			}
			if _, err := fmt.Fprintln(stdout, line); err != nil {
				return exitUsage // stdout closed (a pipe whose reader left)
			}
		}
	}
}

// startAt sets where q starts from the -from flag: "beginning", an RFC 3339
// time, or a cursor of the streams q reads (as tail prints them).
func startAt(sub *stream.Subscriber, q *stream.Query, from string) error {
	switch {
	case from == "":
		return nil
	case from == "beginning":
		q.From = stream.FromBeginning
		return nil
	}
	if t, err := time.Parse(time.RFC3339Nano, from); err == nil {
		q.Since = t
		return nil
	}
	q.From = from
	if err := sub.CheckQuery(*q); err != nil {
		q.From = ""
		return fmt.Errorf("-from %q: not \"beginning\", an RFC 3339 time, nor a cursor of these streams: %w", from, err)
	}
	return nil
}

// formatEvent renders an event as one human-readable line: time, type,
// thread, then what the type carries. A gap reads as a warning: events
// between two positions are gone.
func formatEvent(ev stream.Event) string {
	if ev.Type == stream.TypeGap && ev.Gap != nil {
		g := ev.Gap
		line := fmt.Sprintf("%s %-14s !!! events missing: stream=%s reason=%s", ev.Time.Local().Format("2006-01-02 15:04:05.000"), ev.Type, quoteIf(g.Stream), g.Reason)
		if g.From != "" {
			line += " after=" + g.From
		}
		if g.To != "" {
			line += " resume=" + g.To
		}
		if len(g.Lost) > 0 {
			line += fmt.Sprintf(" lost=%d", len(g.Lost))
		}
		return line + " cursor=" + ev.Cursor
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-14s thread=%s", ev.Time.Local().Format("2006-01-02 15:04:05.000"), ev.Type, quoteIf(ev.ThreadID))
	field := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", name, quoteIf(v))
		}
	}
	field("ns", ev.CheckpointNS)
	field("checkpoint", ev.CheckpointID)
	switch ev.Type {
	case stream.TypeCheckpoint:
		if ev.HasStep {
			field("step", strconv.FormatInt(ev.Step, 10))
		}
		field("source", ev.Source)
		field("parent", ev.ParentID)
		field("run", ev.RunID)
	case stream.TypeWrites:
		field("task", ev.TaskID)
	case stream.TypeThreadCopied:
		field("from", ev.SourceThreadID)
	case stream.TypeRunsDeleted:
		field("runs", strings.Join(quoteAll(ev.RunIDs), ","))
	case stream.TypePruned:
		field("strategy", ev.Strategy)
	}
	if ev.Type != stream.TypeCheckpoint && ev.Type != stream.TypeWrites {
		field("count", strconv.FormatInt(ev.Count, 10))
	}
	if ev.Type == stream.TypeCheckpoint || ev.Type == stream.TypeWrites {
		fmt.Fprintf(&b, " channels=[%s]", strings.Join(quoteAll(slices.Sorted(slices.Values(ev.Channels))), " "))
	}
	if n := len(ev.Values) + len(ev.Writes); n > 0 {
		fmt.Fprintf(&b, " values=%d", n)
	}
	return b.String()
}

// quoteIf quotes s when it would not read as one word.
func quoteIf(s string) string {
	for _, r := range s {
		if r <= ' ' || r == '"' || r == '=' || r == '[' || r == ']' || r == ',' || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quoteIf(s)
	}
	return out
}

// eventLine renders an event as one line of JSON. Values that JSON cannot
// hold (NaN, a time past year 9999...) are replaced by their %v text.
func eventLine(ev stream.Event) string {
	out := ev.JSON(jsonable)
	data, err := json.Marshal(out)
	if err != nil { // not expected: every value passed jsonable
		data, _ = json.Marshal(map[string]string{"error": err.Error(), "id": ev.ID, "cursor": ev.Cursor})
	}
	return string(data)
}

// jsonable returns v when encoding/json can encode it, else its %v text.
func jsonable(v any) any {
	if _, err := json.Marshal(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return v
}
