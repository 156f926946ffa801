package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/seal"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// errChanged reports a thread that changed while it was exported.
var errChanged = errors.New("changed during the export (written, pruned or deleted meanwhile): run the export again")

// nsFlag is the -ns flag of export: unset means every namespace.
type nsFlag struct {
	set bool
	ns  string
}

func (f *nsFlag) String() string { return f.ns }
func (f *nsFlag) Set(s string) error {
	f.set, f.ns = true, s
	return nil
}

// query returns the ListQuery namespace of the flag.
func (f *nsFlag) query() *string {
	if !f.set {
		return nil
	}
	return checkpoint.NS(f.ns)
}

// runExport is "redcheck export THREAD... | --all": the checkpoints of the
// threads, with their values and pending writes, in the export format.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	all := fs.Bool("all", false, "export every thread of the prefix")
	var ns nsFlag
	fs.Var(&ns, "ns", "export this checkpoint namespace only (default: every namespace)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck export THREAD... | --all [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--ns NS] > FILE")
		fmt.Fprintln(stderr, "\nWrites the checkpoints of the threads (metadata, versions, values, pending writes) to")
		fmt.Fprintln(stderr, "standard output, one JSON object a line (docs/cli.md, \"Export format\"), for redcheck import.")
		fmt.Fprintln(stderr, "Exits 1 when a thread named has no checkpoint.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 0, math.MaxInt)
	if !ok {
		return code
	}
	if *all == (len(pos) > 0) {
		fmt.Fprintln(stderr, "redcheck export: name the threads to export, or give --all (not both)")
		fs.Usage()
		return exitUsage
	}
	var threads []string
	for _, th := range pos {
		if err := validateAddress(th, ns.ns); err != nil {
			fmt.Fprintf(stderr, "redcheck export: %v\n", err)
			return exitUsage
		}
		if !slices.Contains(threads, th) {
			threads = append(threads, th)
		}
	}
	if err := keys.ValidateNamespace(ns.ns); err != nil {
		fmt.Fprintf(stderr, "redcheck export: %v\n", err)
		return exitUsage
	}
	opts := redissaver.Options{Serializer: passthrough{}}
	if err := tgt.encryption(&opts); err != nil {
		fmt.Fprintf(stderr, "redcheck export: %v\n", err)
		return exitUsage
	}
	dec := writeOpener{ring: opts.Encryption, plain: opts.ReadPlaintext, prefix: *tgt.prefix}
	s, rdb, empty, code, ok := openSaverWith(ctx, "export", tgt, stderr, opts)
	if !ok {
		return code
	}
	defer rdb.Close()
	if empty && !*all {
		return readError("export", fmt.Errorf("thread %q: %w", threads[0], checkpoint.ErrNotFound), stderr)
	}

	// Named threads must exist before anything is written.
	for _, th := range threads {
		found := false
		for t, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th, CheckpointNS: ns.query(), Limit: 1}) {
			if err != nil {
				return readError("export", err, stderr)
			}
			found = t != nil
		}
		if !found {
			what := fmt.Sprintf("thread %q", th)
			if ns.set {
				what += fmt.Sprintf(" namespace %q", ns.ns)
			}
			return readError("export", fmt.Errorf("%s has no checkpoints: %w", what, checkpoint.ErrNotFound), stderr)
		}
	}

	w := bufio.NewWriterSize(stdout, 1<<16)
	fail := func(err error) int {
		w.Flush()
		return readError("export", err, stderr)
	}
	head, err := encodeLine(exportHeader{Format: exportFormat, Version: exportVersion, ExportedAt: clock().UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return fail(err)
	}
	w.Write(head)
	n := 0
	if *all && !empty {
		// One listing of every thread, kept in memory: a thread's oldest
		// checkpoint may come last.
		byThread := map[string][]*checkpoint.Tuple{}
		for t, err := range s.List(ctx, checkpoint.ListQuery{CheckpointNS: ns.query()}) {
			if err != nil {
				return fail(err)
			}
			byThread[t.Config.ThreadID] = append(byThread[t.Config.ThreadID], t)
		}
		for _, th := range slices.Sorted(maps.Keys(byThread)) {
			k, err := exportThread(ctx, rdb, keys.Of(s), dec, th, byThread[th], w)
			if err != nil {
				return fail(err)
			}
			n += k
			delete(byThread, th)
		}
	}
	for _, th := range threads {
		var tuples []*checkpoint.Tuple
		for t, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th, CheckpointNS: ns.query()}) {
			if err != nil {
				return fail(err)
			}
			tuples = append(tuples, t)
		}
		k, err := exportThread(ctx, rdb, keys.Of(s), dec, th, tuples, w)
		if err != nil {
			return fail(err)
		}
		n += k
	}
	end, err := encodeLine(exportEnd{End: exportFormat, Checkpoints: n})
	if err != nil {
		return fail(err)
	}
	w.Write(end)
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "redcheck export: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// exportThread writes the lines of one thread's checkpoints, namespace by
// namespace in byte order, each namespace's oldest ID first with every
// parent before its children. It returns the number of lines written.
func exportThread(ctx context.Context, rdb redis.UniversalClient, layout keys.Layout, dec writeOpener, th string, tuples []*checkpoint.Tuple, w io.Writer) (int, error) {
	if len(tuples) == 0 {
		return 0, nil
	}
	// The task paths and indices of pending writes are not in a Tuple: they
	// are read from the checkpoint hashes (docs/storage-format.md).
	gen, err := rdb.HGet(ctx, layout.Head(th), keys.HeadGeneration).Result()
	if errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("thread %q %w", th, errChanged)
	}
	if err != nil {
		return 0, err
	}
	byNS := map[string][]*checkpoint.Tuple{}
	for _, t := range tuples {
		byNS[t.Config.CheckpointNS] = append(byNS[t.Config.CheckpointNS], t)
	}
	n := 0
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		group := byNS[ns]
		slices.SortFunc(group, func(a, b *checkpoint.Tuple) int { return cmp.Compare(a.Config.CheckpointID, b.Config.CheckpointID) })
		byID := make(map[string]*checkpoint.Tuple, len(group))
		for _, t := range group {
			byID[t.Config.CheckpointID] = t
		}
		var order []*checkpoint.Tuple
		done := map[string]bool{}
		visit := func(t *checkpoint.Tuple) {
			// Ancestors first, iteratively: a chain may be long.
			var chain []*checkpoint.Tuple
			for c := t; c != nil && !done[c.Config.CheckpointID]; c = byID[parentID(c)] {
				done[c.Config.CheckpointID] = true
				chain = append(chain, c)
			}
			for i := len(chain) - 1; i >= 0; i-- {
				order = append(order, chain[i])
			}
		}
		for _, t := range group {
			visit(t)
		}
		versions := map[string]map[string]string{} // the exported versions of each ID
		for start := 0; start < len(order); start += 100 {
			page := order[start:min(start+100, len(order))]
			cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, t := range page {
					p.HGetAll(ctx, layout.Checkpoint(th, gen, ns, t.Config.CheckpointID))
				}
				return nil
			})
			if err != nil {
				return n, err
			}
			for i, t := range page {
				raw, err := cmds[i].(*redis.MapStringStringCmd).Result()
				if err != nil {
					return n, err
				}
				line, err := exportedLine(ctx, dec, t, raw, versions)
				if err != nil {
					return n, fmt.Errorf("thread %q namespace %q checkpoint %s: %w", th, ns, t.Config.CheckpointID, err)
				}
				data, err := encodeLine(line)
				if err != nil {
					return n, err
				}
				if _, err := w.Write(data); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	return n, nil
}

// writeOpener opens the stored values of pending writes read from a
// checkpoint hash, as the saver would (its Encryption and ReadPlaintext):
// an export holds values in their plain form.
type writeOpener struct {
	ring   *checkpoint.Keyring
	plain  bool
	prefix string
}

// open returns the plain stored form of the value of the write of task and
// idx to channel in checkpoint t, stored as stored.
func (o writeOpener) open(ctx context.Context, t *checkpoint.Tuple, task string, idx int, channel, stored string) (string, error) {
	if o.ring == nil && !seal.IsSealed(stored) {
		return stored, nil
	}
	c := t.Config
	return codec.OpenValue(ctx, o.ring, o.plain, stored,
		func() []byte {
			return seal.WriteAAD(o.prefix, c.ThreadID, c.CheckpointNS, c.CheckpointID, task, idx, channel)
		},
		func() string { return fmt.Sprintf("write %d of task %q to %q", idx, task, channel) })
}

// exportedLine builds the line of tuple t, whose checkpoint hash is raw.
// versions holds the exported channel versions of the checkpoints before it
// (its parent's among them); t's are added.
func exportedLine(ctx context.Context, dec writeOpener, t *checkpoint.Tuple, raw map[string]string, versions map[string]map[string]string) (*exportLine, error) {
	if raw["v"] == "" {
		return nil, errChanged
	}
	cp := t.Checkpoint
	l := &exportLine{
		ThreadID: t.Config.ThreadID, CheckpointNS: t.Config.CheckpointNS,
		Checkpoint: exportCheckpoint{
			V: cp.V, ID: cp.ID, TS: cp.TS, ParentID: parentID(t),
			ChannelVersions: maps.Clone(cp.ChannelVersions), VersionsSeen: cp.VersionsSeen, UpdatedChannels: cp.UpdatedChannels,
		},
		NewVersions:   map[string]string{},
		Values:        map[string]rawValue{},
		PendingWrites: []exportWrite{},
	}
	if l.Checkpoint.ChannelVersions == nil {
		l.Checkpoint.ChannelVersions = map[string]string{}
	}
	if l.Checkpoint.VersionsSeen == nil {
		l.Checkpoint.VersionsSeen = map[string]map[string]string{}
	}
	values := maps.Clone(cp.ChannelValues)
	// A legacy checkpoint (v < 4) reads with its parent's pending sends
	// moved into the channel __pregel_tasks (checkpoint.MigratePendingSends):
	// that channel is not stored, and the migration is made again on read
	// after the import.
	if _, stored := raw["c:"+checkpoint.TasksChannel]; cp.V < 4 && !stored {
		delete(l.Checkpoint.ChannelVersions, checkpoint.TasksChannel)
		delete(values, checkpoint.TasksChannel)
	}
	versions[cp.ID] = l.Checkpoint.ChannelVersions
	parent, hasParent := versions[l.Checkpoint.ParentID]
	for ch, v := range l.Checkpoint.ChannelVersions {
		if pv, ok := parent[ch]; !hasParent || !ok || pv != v {
			l.NewVersions[ch] = v
		}
	}
	for ch := range l.NewVersions {
		v, ok := values[ch]
		if !ok {
			continue
		}
		r, ok := v.(rawValue)
		if !ok {
			return nil, fmt.Errorf("channel %q: a value of type %T, not as stored", ch, v)
		}
		l.Values[ch] = r
	}
	md, err := checkpoint.EncodeMetadataValue(map[string]any(t.Metadata))
	if err != nil {
		return nil, err
	}
	l.Metadata = md

	for f, v := range raw {
		task, idx, ok := codec.ParseWriteField(f)
		if !ok {
			continue
		}
		var parts [3]string // channel, task path, stored value
		if !codec.Unpack(v, parts[:]) {
			return nil, fmt.Errorf("write field %q: %w", f, redissaver.ErrCorrupt)
		}
		stored, err := dec.open(ctx, t, task, idx, parts[0], parts[2])
		if err != nil {
			return nil, fmt.Errorf("write field %q: %w", f, err)
		}
		typ, data, err := codec.UnpackValue(stored)
		if err != nil {
			return nil, fmt.Errorf("write field %q: %v: %w", f, err, redissaver.ErrCorrupt)
		}
		l.PendingWrites = append(l.PendingWrites, exportWrite{
			TaskID: task, TaskPath: parts[1], Index: idx, Channel: parts[0], Value: rawValue{Type: typ, Data: []byte(data)},
		})
	}
	slices.SortFunc(l.PendingWrites, func(a, b exportWrite) int {
		return cmp.Or(strings.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Index, b.Index))
	})
	// The hash was read after the tuple: they must agree.
	if len(l.PendingWrites) != len(t.PendingWrites) {
		return nil, errChanged
	}
	for i, pw := range t.PendingWrites {
		ew := l.PendingWrites[i]
		r, ok := pw.Value.(rawValue)
		if pw.TaskID != ew.TaskID || pw.Channel != ew.Channel || !ok || r.Type != ew.Value.Type || string(r.Data) != string(ew.Value.Data) {
			return nil, errChanged
		}
	}
	if err := checkUTF8(l); err != nil {
		return nil, err
	}
	return l, nil
}
