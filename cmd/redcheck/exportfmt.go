package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/inspect"
	"github.com/graphstate/redcheck/internal/keys"
)

// This file holds the export format that "redcheck export" writes and
// "redcheck import" reads (docs/cli.md, "Export format"): one JSON object a
// line, a header first, then one line per checkpoint, then an end line.

// Identity of the format.
const (
	exportFormat  = "redcheck-export"
	exportVersion = 1
)

// exportHeader is the first line of an export.
type exportHeader struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	ExportedAt string `json:"exported_at"`
}

// exportEnd is the last line of an export: a file without it was cut short.
type exportEnd struct {
	End         string `json:"end"`
	Checkpoints int    `json:"checkpoints"`
}

// exportLine is one checkpoint, with its pending writes.
type exportLine struct {
	ThreadID     string           `json:"thread_id"`
	CheckpointNS string           `json:"checkpoint_ns"`
	Checkpoint   exportCheckpoint `json:"checkpoint"`
	// Metadata is the checkpoint's metadata as canonical JSON
	// (checkpoint.EncodeMetadataValue), an object.
	Metadata json.RawMessage `json:"metadata"`
	// NewVersions are the channels whose version differs from the parent's
	// (all of them when there is no parent): Put's newVersions.
	NewVersions map[string]string `json:"new_versions"`
	// Values are the stored values of the channels of NewVersions that have
	// one; a channel of NewVersions without a value here has none.
	Values        map[string]rawValue `json:"values"`
	PendingWrites []exportWrite       `json:"pending_writes"`
}

// exportCheckpoint is a checkpoint.Checkpoint without its values, with its
// parent's ID ("" for a root).
type exportCheckpoint struct {
	V               int                          `json:"v"`
	ID              string                       `json:"id"`
	TS              string                       `json:"ts"`
	ParentID        string                       `json:"parent_id"`
	ChannelVersions map[string]string            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]string `json:"versions_seen"`
	UpdatedChannels []string                     `json:"updated_channels"`
}

// exportWrite is one pending write as stored: its task, task path, index
// (checkpoint.WriteIndex) and value.
type exportWrite struct {
	TaskID   string   `json:"task_id"`
	TaskPath string   `json:"task_path"`
	Index    int      `json:"index"`
	Channel  string   `json:"channel"`
	Value    rawValue `json:"value"`
}

// rawValue is a value as the saver's serializer wrote it: its type tag and
// bytes, never decoded. In JSON, Data is base64 (standard, padded).
type rawValue struct {
	Type string `json:"type"`
	Data []byte `json:"data"`
}

// passthrough is the checkpoint.Serializer of export and import: it hands
// stored values over as rawValue, and stores a rawValue as it is, so that
// values round-trip byte for byte whatever serializer wrote them.
type passthrough struct{}

func (passthrough) DumpsTyped(v any) (string, []byte, error) {
	r, ok := v.(rawValue)
	if !ok {
		return "", nil, fmt.Errorf("redcheck: pass-through serializer given a %T: %w", v, checkpoint.ErrSerialization)
	}
	return r.Type, r.Data, nil
}

func (passthrough) LoadsTyped(typ string, data []byte) (any, error) {
	return rawValue{Type: typ, Data: append([]byte{}, data...)}, nil
}

// encodeLine renders v as one line of JSON, without HTML escaping.
func encodeLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeStrictLine decodes one line into v, refusing unknown fields and
// trailing data.
func decodeStrictLine(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

// lineReader reads the lines of an export, numbering them from 1.
type lineReader struct {
	r *bufio.Reader
	n int
}

// next returns the next line without its newline; io.EOF after the last.
func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.r.ReadBytes('\n')
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	lr.n++
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
}

// parseHeader checks the first line of an export.
func parseHeader(line []byte) error {
	var h exportHeader
	if err := decodeStrictLine(line, &h); err != nil {
		return fmt.Errorf("not a redcheck export header: %v", err)
	}
	if h.Format != exportFormat {
		return fmt.Errorf("format %q, want %q", h.Format, exportFormat)
	}
	if h.Version != exportVersion {
		return fmt.Errorf("export format version %d; this redcheck reads version %d", h.Version, exportVersion)
	}
	return nil
}

// parseBody decodes a line after the header: an end line (end non-nil) or a
// checkpoint, which it validates.
func parseBody(line []byte) (*exportLine, *exportEnd, error) {
	if bytes.HasPrefix(line, []byte(`{"end":`)) {
		var e exportEnd
		if err := decodeStrictLine(line, &e); err != nil {
			return nil, nil, err
		}
		if e.End != exportFormat {
			return nil, nil, fmt.Errorf("end line %q, want %q", e.End, exportFormat)
		}
		return nil, &e, nil
	}
	var l exportLine
	if err := decodeStrictLine(line, &l); err != nil {
		return nil, nil, err
	}
	if err := validateLine(&l); err != nil {
		return nil, nil, err
	}
	return &l, nil, nil
}

// validateLine checks what Put and PutWrites would refuse, and what the
// format promises, before anything is written.
func validateLine(l *exportLine) error {
	cp := &l.Checkpoint
	if err := validateAddress(l.ThreadID, l.CheckpointNS); err != nil {
		return err
	}
	if err := keys.ValidateID(cp.ID); err != nil {
		return fmt.Errorf("checkpoint: %v", err)
	}
	if cp.ParentID != "" {
		if err := keys.ValidateID(cp.ParentID); err != nil {
			return fmt.Errorf("parent: %v", err)
		}
		if cp.ParentID == cp.ID {
			return fmt.Errorf("checkpoint %s is its own parent", cp.ID)
		}
	}
	md, err := decodeMetadata(l.Metadata)
	if err != nil {
		return err
	}
	if step, ok := md["step"]; ok {
		if _, ok := inspect.Step(md); !ok || step == nil {
			return fmt.Errorf("metadata step %s is not an integer", compactJSON(plain(step)))
		}
	}
	for ch, v := range cp.ChannelVersions {
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("channel %q: version %q holds the byte 0", ch, v)
		}
	}
	for ch, v := range l.NewVersions {
		if have, ok := cp.ChannelVersions[ch]; !ok || have != v || v == "" {
			return fmt.Errorf("new_versions gives channel %q version %q, channel_versions %q", ch, v, have)
		}
	}
	for ch, v := range l.Values {
		if _, ok := l.NewVersions[ch]; !ok {
			return fmt.Errorf("values holds channel %q, which new_versions does not list", ch)
		}
		if v.Type == "" {
			return fmt.Errorf("value of channel %q: empty type", ch)
		}
	}
	seen := map[[2]string]bool{}
	for i, w := range l.PendingWrites {
		if w.Value.Type == "" {
			return fmt.Errorf("pending write %d: empty type", i)
		}
		if fixed := checkpoint.WriteIndex(w.Channel, 0); fixed < 0 && w.Index != fixed {
			return fmt.Errorf("pending write %d: channel %q has index %d, not %d", i, w.Channel, w.Index, fixed)
		} else if fixed >= 0 && w.Index < 0 {
			return fmt.Errorf("pending write %d: negative index %d for channel %q", i, w.Index, w.Channel)
		}
		k := [2]string{w.TaskID, fmt.Sprint(w.Index)}
		if seen[k] {
			return fmt.Errorf("pending write %d: task %q has two writes of index %d", i, w.TaskID, w.Index)
		}
		seen[k] = true
	}
	if _, err := writeCalls(l.PendingWrites); err != nil {
		return err
	}
	return nil
}

// decodeMetadata decodes the metadata of a line: a JSON object.
func decodeMetadata(raw json.RawMessage) (checkpoint.Metadata, error) {
	v, err := checkpoint.DecodeMetadataValue(raw)
	if err != nil {
		return nil, fmt.Errorf("metadata: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("metadata is not a JSON object")
	}
	return checkpoint.Metadata(m), nil
}

// writeCall is one PutWrites call of an import.
type writeCall struct {
	taskID, taskPath string
	writes           []checkpoint.Write
}

// writeCalls plans the PutWrites calls that store ws again with the same
// fields: each write under its own (task, index), with its task path.
//
// PutWrites gives a regular write the index of its position in the call,
// keeps it only if that index is new, and gives a write to a special
// channel its fixed negative index, overwriting. So, per task, the regular
// writes are cut into runs of one task path (in index order), and each run
// is one call whose position i holds the write of index i: the writes of
// earlier runs, already stored, are ignored there. A position no write has
// (a gap, which a special-channel write at that position of the original
// call made) holds a copy of one of the task's special-channel writes; the
// special-channel writes are then put last, one call per task path, which
// overwrites those copies with what was stored. A gap in a task without a
// special-channel write cannot be reproduced: an error.
func writeCalls(ws []exportWrite) ([]writeCall, error) {
	byTask := map[string][]exportWrite{}
	var tasks []string
	for _, w := range ws {
		if _, ok := byTask[w.TaskID]; !ok {
			tasks = append(tasks, w.TaskID)
		}
		byTask[w.TaskID] = append(byTask[w.TaskID], w)
	}
	slices.Sort(tasks)
	var calls []writeCall
	for _, task := range tasks {
		tw := byTask[task]
		slices.SortFunc(tw, func(a, b exportWrite) int { return cmp.Compare(a.Index, b.Index) })
		var regs, specs []exportWrite
		for _, w := range tw {
			if w.Index < 0 {
				specs = append(specs, w)
			} else {
				regs = append(regs, w)
			}
		}
		at := map[int]exportWrite{}
		for _, w := range regs {
			at[w.Index] = w
		}
		for start := 0; start < len(regs); {
			end := start
			for end+1 < len(regs) && regs[end+1].TaskPath == regs[start].TaskPath {
				end++
			}
			call := writeCall{taskID: task, taskPath: regs[start].TaskPath}
			for i := 0; i <= regs[end].Index; i++ {
				w, ok := at[i]
				if !ok {
					if len(specs) == 0 {
						return nil, fmt.Errorf("task %q: no write of index %d before index %d, and no special-channel write to hold its place: PutWrites cannot store these indices", task, i, regs[end].Index)
					}
					w = specs[0]
				}
				call.writes = append(call.writes, checkpoint.Write{Channel: w.Channel, Value: w.Value})
			}
			calls = append(calls, call)
			start = end + 1
		}
		var paths []string
		byPath := map[string][]checkpoint.Write{}
		for _, w := range specs {
			if _, ok := byPath[w.TaskPath]; !ok {
				paths = append(paths, w.TaskPath)
			}
			byPath[w.TaskPath] = append(byPath[w.TaskPath], checkpoint.Write{Channel: w.Channel, Value: w.Value})
		}
		for _, p := range paths {
			calls = append(calls, writeCall{taskID: task, taskPath: p, writes: byPath[p]})
		}
	}
	return calls, nil
}

// checkUTF8 refuses a line whose strings are not valid UTF-8: JSON would
// carry them changed (each bad byte as U+FFFD), so the import would differ.
func checkUTF8(l *exportLine) error {
	bad := func(what, s string) error {
		if utf8.ValidString(s) {
			return nil
		}
		return fmt.Errorf("%s %q is not valid UTF-8, which the export format cannot carry", what, s)
	}
	cp := &l.Checkpoint
	errs := []error{bad("thread", l.ThreadID), bad("namespace", l.CheckpointNS), bad("ts", cp.TS)}
	for ch, v := range cp.ChannelVersions {
		errs = append(errs, bad("channel", ch), bad("version", v))
	}
	for node, m := range cp.VersionsSeen {
		errs = append(errs, bad("versions_seen node", node))
		for ch, v := range m {
			errs = append(errs, bad("channel", ch), bad("version", v))
		}
	}
	for _, ch := range cp.UpdatedChannels {
		errs = append(errs, bad("channel", ch))
	}
	for _, v := range l.Values {
		errs = append(errs, bad("type", v.Type))
	}
	for _, w := range l.PendingWrites {
		errs = append(errs, bad("task", w.TaskID), bad("task path", w.TaskPath), bad("channel", w.Channel), bad("type", w.Value.Type))
	}
	return errors.Join(errs...)
}
