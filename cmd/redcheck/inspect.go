package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// This file holds what the read-only inspection commands (threads, history,
// show, diff) share: opening a saver without writing, parsing flags mixed
// with positional arguments, turning decoded values into JSON, and the time
// of a checkpoint.

// clock is the current time; tests fix it so that ages are deterministic.
var clock = time.Now

// parseArgs parses a subcommand's flags, which may come before, between or
// after its positional arguments (after "--", every argument is
// positional). It returns the positional arguments, of which there must be
// min to max. ok is false when the subcommand must stop, with code as its
// exit status.
func parseArgs(fs *flag.FlagSet, args []string, stderr io.Writer, min, max int) (pos []string, code int, ok bool) {
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		consumed := len(rest) - fs.NArg()
		if consumed > 0 && rest[consumed-1] == "--" {
			pos = append(pos, fs.Args()...)
			break
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pos) < min || len(pos) > max {
		if len(pos) > max {
			fmt.Fprintf(stderr, "redcheck %s: unexpected argument %q\n", fs.Name(), pos[max])
		} else {
			fmt.Fprintf(stderr, "redcheck %s: missing argument\n", fs.Name())
		}
		fs.Usage()
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

// openSaver connects to the target and opens its saver for reading. It
// writes nothing: redissaver.New would create the meta key of a prefix that
// has none, so a prefix without one is reported as empty (empty true, with
// a nil saver) instead. code is the exit status when ok is false.
func openSaver(ctx context.Context, name string, tgt target, stderr io.Writer) (s *redissaver.Saver, rdb redis.UniversalClient, empty bool, code int, ok bool) {
	return openSaverWith(ctx, name, tgt, stderr, redissaver.Options{})
}

// openSaverWith is openSaver with more options for the saver (its
// serializer, say); the target's prefix and shards, and AcceptEviction, are
// set here.
func openSaverWith(ctx context.Context, name string, tgt target, stderr io.Writer, opts redissaver.Options) (s *redissaver.Saver, rdb redis.UniversalClient, empty bool, code int, ok bool) {
	fail := func(format string, args ...any) (*redissaver.Saver, redis.UniversalClient, bool, int, bool) {
		fmt.Fprintf(stderr, "redcheck %s: "+format+"\n", append([]any{name}, args...)...)
		if rdb != nil {
			rdb.Close()
		}
		return nil, nil, false, exitUsage, false
	}
	layout, err := keys.New(*tgt.prefix, *tgt.shards)
	if err != nil {
		return fail("%v", err)
	}
	if opts.Encryption == nil {
		if err := tgt.encryption(&opts); err != nil {
			return fail("%v", err)
		}
	}
	if rdb, ok = dial(ctx, name, tgt, stderr); !ok {
		return nil, nil, false, exitUsage, false
	}
	n, err := rdb.Exists(ctx, layout.Meta()).Result()
	if err != nil {
		return fail("%v", err)
	}
	if n == 0 {
		return nil, rdb, true, exitOK, true
	}
	// Eviction is accepted: an inspector reads whatever is there, and
	// reports a loss as the saver's reads do (checkpoint.ErrDataLoss).
	opts.AcceptEviction, opts.Prefix, opts.Shards = true, *tgt.prefix, *tgt.shards
	s, err = redissaver.New(ctx, rdb, opts)
	if err != nil {
		return fail("%v", err)
	}
	return s, rdb, false, exitOK, true
}

// readError prints err and returns the exit status it calls for: 1 when
// what was asked for does not exist, 2 for anything else.
func readError(name string, err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "redcheck %s: %v\n", name, err)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return exitFound
	}
	return exitUsage
}

// compactJSON renders a plain value on one line.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// prettyJSON renders a plain value indented by two spaces, each line after
// the first starting with indent.
func prettyJSON(v any, indent string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// writeJSON writes doc to w, indented, and returns the exit status.
func writeJSON(w io.Writer, doc any) int {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return exitUsage
	}
	return exitOK
}

// age renders how long ago t was, to the second; "-" when unknown.
func age(t time.Time, ok bool) string {
	if !ok {
		return "-"
	}
	d := clock().Sub(t).Round(time.Second)
	if d >= 48*time.Hour {
		return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	}
	return d.String()
}

// valuesSize is the size of a checkpoint's channel values encoded as
// MessagePack (the default serializer), before any compression: an
// estimate of what they take in Redis.
func valuesSize(values map[string]any) int {
	n := 0
	for _, v := range values {
		_, data, err := checkpoint.MsgpackSerializer{}.DumpsTyped(v)
		if err == nil {
			n += len(data)
		}
	}
	return n
}

// humanBytes renders a byte count: 512 B, 1.5 KiB, 3.2 MiB.
func humanBytes(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// metaSource returns the metadata's "source" when it is a string.
func metaSource(md checkpoint.Metadata) string {
	s, _ := md["source"].(string)
	return s
}

// stepText renders a step for the human formats; "-" when there is none.
func stepText(md checkpoint.Metadata) string {
	if n, ok := inspect.Step(md); ok {
		return strconv.FormatInt(n, 10)
	}
	return "-"
}

// orDash returns s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// parentID returns the ID of a tuple's parent, "" for a root checkpoint.
func parentID(t *checkpoint.Tuple) string {
	if t.ParentConfig == nil {
		return ""
	}
	return t.ParentConfig.CheckpointID
}

// stepPtr returns the step for JSON output: nil when there is none.
func stepPtr(md checkpoint.Metadata) *int64 {
	if n, ok := inspect.Step(md); ok {
		return &n
	}
	return nil
}

// timeFields returns a checkpoint's time as RFC 3339 text and its age in
// seconds, for JSON output; empty and nil when unknown.
func timeFields(cp checkpoint.Checkpoint) (string, *float64) {
	t, ok := checkpointTime(cp)
	if !ok {
		return "", nil
	}
	a := clock().Sub(t).Seconds()
	return t.Format(time.RFC3339Nano), &a
}

// plain is inspect.Plain: decoded values as plain JSON data.
var plain = inspect.Plain

// The times of checkpoints: inspect's, shared with the UI.
var (
	idTime         = inspect.IDTime
	checkpointTime = inspect.CheckpointTime
)
