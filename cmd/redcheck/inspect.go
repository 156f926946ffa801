package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/oklog/ulid/v2"
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
	rdb, err = connect(*tgt.url, *tgt.cluster)
	if err != nil {
		return fail("%v", err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fail("cannot reach Redis at %s: %v", redactURL(*tgt.url), err)
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

// plain turns a value decoded by a serializer into one of nil, bool,
// json.Number, string, []any and map[string]any, which encoding/json writes
// as it is and which compare with reflect.DeepEqual: []byte becomes its
// base64 text (as encoding/json writes it), a time its RFC 3339 text, NaN
// and the infinities their names, a checkpoint.DeltaSnapshot the object
// {"$delta_snapshot": value}, anything else its %v text.
func plain(v any) any {
	switch x := v.(type) {
	case nil, bool, string:
		return x
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case int:
		return json.Number(strconv.Itoa(x))
	case uint64:
		return json.Number(strconv.FormatUint(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case json.Number:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case checkpoint.DeltaSnapshot:
		return map[string]any{"$delta_snapshot": plain(x.Value)}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case checkpoint.Metadata:
		return plain(map[string]any(x))
	}
	// Another type (a metadata number of another width, say): through
	// encoding/json when it can, else as text.
	if data, err := json.Marshal(v); err == nil {
		var out any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if d.Decode(&out) == nil {
			return out
		}
	}
	return fmt.Sprintf("%v", v)
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

// idTime returns the creation time an ID holds: a ULID's milliseconds, or
// the timestamp of a UUID of version 6 (LangGraph's uuid6), 7 or 1. ok is
// false for any other ID.
func idTime(id string) (time.Time, bool) {
	if len(id) == ulid.EncodedSize {
		if u, err := ulid.ParseStrict(id); err == nil {
			return ulid.Time(u.Time()).UTC(), true
		}
		return time.Time{}, false
	}
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return time.Time{}, false
	}
	raw, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(raw) != 16 {
		return time.Time{}, false
	}
	be := func(b []byte) uint64 {
		var n uint64
		for _, c := range b {
			n = n<<8 | uint64(c)
		}
		return n
	}
	// 100-ns intervals from the Gregorian epoch (1582-10-15) to Unix's.
	const gregorian = 0x01B21DD213814000
	fromGregorian := func(ticks uint64) (time.Time, bool) {
		if ticks < gregorian {
			return time.Time{}, false
		}
		d := ticks - gregorian
		return time.Unix(int64(d/1e7), int64(d%1e7)*100).UTC(), true
	}
	switch raw[6] >> 4 {
	case 6:
		return fromGregorian(be(raw[0:6])<<12 | be(raw[6:8])&0x0fff)
	case 7:
		return time.UnixMilli(int64(be(raw[0:6]))).UTC(), true
	case 1:
		return fromGregorian((be(raw[6:8])&0x0fff)<<48 | be(raw[4:6])<<32 | be(raw[0:4]))
	}
	return time.Time{}, false
}

// checkpointTime returns the time of a checkpoint: its ID's when the ID is
// time-ordered, else its ts field's. ok is false when neither tells.
func checkpointTime(cp checkpoint.Checkpoint) (time.Time, bool) {
	if t, ok := idTime(cp.ID); ok {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339Nano, cp.TS); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
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

// metaStep returns the metadata's "step" as an integer.
func metaStep(md checkpoint.Metadata) (int64, bool) {
	switch x := md["step"].(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint64:
		return int64(x), true
	case float64:
		return int64(x), x == math.Trunc(x)
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}

// metaSource returns the metadata's "source" when it is a string.
func metaSource(md checkpoint.Metadata) string {
	s, _ := md["source"].(string)
	return s
}

// stepText renders a step for the human formats; "-" when there is none.
func stepText(md checkpoint.Metadata) string {
	if n, ok := metaStep(md); ok {
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

// sortedKeys returns the keys of m in byte order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stepPtr returns the step for JSON output: nil when there is none.
func stepPtr(md checkpoint.Metadata) *int64 {
	if n, ok := metaStep(md); ok {
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
