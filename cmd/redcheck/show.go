package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// writeDoc is one pending write of "redcheck show --json".
type writeDoc struct {
	TaskID  string `json:"task_id"`
	Channel string `json:"channel"`
	Value   any    `json:"value"`
}

// interruptDoc is one pending interrupt: a write to checkpoint.InterruptChannel.
type interruptDoc struct {
	TaskID string `json:"task_id"`
	Value  any    `json:"value"`
}

// deltaDoc is a channel that has a version but no value stored at the
// checkpoint (a delta channel): its nearest seed and the writes since, as
// DeltaChannelHistory returns them.
type deltaDoc struct {
	HasSeed bool       `json:"has_seed"`
	Seed    any        `json:"seed"`
	Writes  []writeDoc `json:"writes"`
}

// showDoc is the output of "redcheck show --json".
type showDoc struct {
	ThreadID      string              `json:"thread_id"`
	CheckpointNS  string              `json:"checkpoint_ns"`
	CheckpointID  string              `json:"checkpoint_id"`
	ParentID      string              `json:"parent_id"`
	Step          *int64              `json:"step"`
	Source        string              `json:"source"`
	TS            string              `json:"ts"`
	Time          string              `json:"time,omitempty"`
	AgeSeconds    *float64            `json:"age_seconds"`
	Bytes         int                 `json:"bytes"`
	Metadata      map[string]any      `json:"metadata"`
	Channels      map[string]any      `json:"channels"`
	Versions      map[string]string   `json:"versions"`
	DeltaChannels map[string]deltaDoc `json:"delta_channels,omitempty"`
	PendingWrites []writeDoc          `json:"pending_writes"`
	Interrupts    []interruptDoc      `json:"interrupts"`
}

// runShow is "redcheck show THREAD [ID]": one checkpoint, whole.
func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	ns := fs.String("ns", "", "checkpoint namespace (default: the root graph)")
	asJSON := fs.Bool("json", false, "print one JSON document")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck show THREAD [CHECKPOINT_ID] [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--ns NS] [--json]")
		fmt.Fprintln(stderr, "\nPrints one checkpoint (the thread's latest by default): metadata, parent, channel values as JSON")
		fmt.Fprintln(stderr, "([]byte as base64), pending writes and pending interrupts. Exits 1 when there is no such checkpoint.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 1, 2)
	if !ok {
		return code
	}
	cfg := checkpoint.Config{ThreadID: pos[0], CheckpointNS: *ns}
	if len(pos) == 2 {
		cfg.CheckpointID = pos[1]
	}
	if err := validateAddress(cfg.ThreadID, cfg.CheckpointNS); err != nil {
		fmt.Fprintf(stderr, "redcheck show: %v\n", err)
		return exitUsage
	}
	s, rdb, empty, code, ok := openSaver(ctx, "show", tgt, stderr)
	if !ok {
		return code
	}
	defer rdb.Close()
	if empty {
		return readError("show", fmt.Errorf("thread %q: %w", cfg.ThreadID, checkpoint.ErrNotFound), stderr)
	}
	t, err := s.GetTuple(ctx, cfg)
	if err != nil {
		return readError("show", err, stderr)
	}
	doc, err := showTuple(ctx, s, t)
	if err != nil {
		return readError("show", err, stderr)
	}
	if *asJSON {
		return writeJSON(stdout, doc)
	}
	printShow(stdout, doc)
	return exitOK
}

// showTuple builds the document of a tuple; the history of its delta
// channels (those with a version and no value) takes one more read.
func showTuple(ctx context.Context, s *redissaver.Saver, t *checkpoint.Tuple) (showDoc, error) {
	cp := t.Checkpoint
	doc := showDoc{
		ThreadID: t.Config.ThreadID, CheckpointNS: t.Config.CheckpointNS, CheckpointID: t.Config.CheckpointID,
		ParentID: parentID(t), Step: stepPtr(t.Metadata), Source: metaSource(t.Metadata), TS: cp.TS,
		Bytes: valuesSize(cp.ChannelValues), Metadata: map[string]any{}, Channels: map[string]any{},
		Versions: map[string]string{}, PendingWrites: []writeDoc{}, Interrupts: []interruptDoc{},
	}
	doc.Time, doc.AgeSeconds = timeFields(cp)
	for k, v := range t.Metadata {
		doc.Metadata[k] = plain(v)
	}
	for k, v := range cp.ChannelValues {
		doc.Channels[k] = plain(v)
	}
	var missing []string
	for _, k := range slices.Sorted(maps.Keys(cp.ChannelVersions)) {
		doc.Versions[k] = cp.ChannelVersions[k]
		if _, ok := cp.ChannelValues[k]; !ok {
			missing = append(missing, k)
		}
	}
	for _, w := range t.PendingWrites {
		doc.PendingWrites = append(doc.PendingWrites, writeDoc{TaskID: w.TaskID, Channel: w.Channel, Value: plain(w.Value)})
		if w.Channel == checkpoint.InterruptChannel {
			doc.Interrupts = append(doc.Interrupts, interruptDoc{TaskID: w.TaskID, Value: plain(w.Value)})
		}
	}
	if len(missing) > 0 {
		hist, err := s.DeltaChannelHistory(ctx, t.Config, missing)
		if err != nil {
			return doc, err
		}
		doc.DeltaChannels = map[string]deltaDoc{}
		for _, c := range missing {
			h := hist[c]
			d := deltaDoc{HasSeed: h.HasSeed, Seed: plain(h.Seed), Writes: []writeDoc{}}
			for _, w := range h.Writes {
				d.Writes = append(d.Writes, writeDoc{TaskID: w.TaskID, Channel: w.Channel, Value: plain(w.Value)})
			}
			doc.DeltaChannels[c] = d
		}
	}
	return doc, nil
}

// printShow writes the human format of show.
func printShow(w io.Writer, d showDoc) {
	fmt.Fprintf(w, "thread:     %s\n", quoteIf(d.ThreadID))
	fmt.Fprintf(w, "namespace:  %s\n", quoteIf(d.CheckpointNS))
	fmt.Fprintf(w, "checkpoint: %s\n", d.CheckpointID)
	fmt.Fprintf(w, "parent:     %s\n", orDash(d.ParentID))
	step := "-"
	if d.Step != nil {
		step = fmt.Sprint(*d.Step)
	}
	fmt.Fprintf(w, "step:       %s\n", step)
	fmt.Fprintf(w, "source:     %s\n", orDash(d.Source))
	t, ok := checkpointTime(checkpoint.Checkpoint{ID: d.CheckpointID, TS: d.TS})
	when := "-"
	if ok {
		when = t.Format("2006-01-02 15:04:05.000 MST") + " (" + age(t, true) + " ago)"
	}
	fmt.Fprintf(w, "time:       %s\n", when)
	fmt.Fprintf(w, "size:       %s\n", humanBytes(d.Bytes))

	fmt.Fprintf(w, "\nmetadata:\n")
	for _, k := range slices.Sorted(maps.Keys(d.Metadata)) {
		fmt.Fprintf(w, "  %s: %s\n", k, prettyJSON(d.Metadata[k], "  "))
	}
	fmt.Fprintf(w, "\nchannels (%d):\n", len(d.Versions))
	for _, k := range slices.Sorted(maps.Keys(d.Versions)) {
		v, ok := d.Channels[k]
		switch {
		case ok:
			fmt.Fprintf(w, "  %s @%s: %s\n", k, d.Versions[k], prettyJSON(v, "  "))
		case d.DeltaChannels != nil:
			h := d.DeltaChannels[k]
			seed := "none (the chain ends before one)"
			if h.HasSeed {
				seed = compactJSON(h.Seed)
			}
			fmt.Fprintf(w, "  %s @%s: delta channel, seed %s, %d writes since\n", k, d.Versions[k], seed, len(h.Writes))
			for _, wr := range h.Writes {
				fmt.Fprintf(w, "    task %s: %s\n", quoteIf(wr.TaskID), compactJSON(wr.Value))
			}
		}
	}
	fmt.Fprintf(w, "\npending writes (%d):\n", len(d.PendingWrites))
	for _, wr := range d.PendingWrites {
		fmt.Fprintf(w, "  task %s channel %s: %s\n", quoteIf(wr.TaskID), quoteIf(wr.Channel), compactJSON(wr.Value))
	}
	fmt.Fprintf(w, "\ninterrupts (%d):\n", len(d.Interrupts))
	for _, in := range d.Interrupts {
		fmt.Fprintf(w, "  task %s: %s\n", quoteIf(in.TaskID), prettyJSON(in.Value, "  "))
	}
}
