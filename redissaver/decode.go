package redissaver

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/canonjson"
	"github.com/graphstate/redcheck/internal/codec"
)

// decodeTuple turns the reply of load_checkpoint (lib.lua) into a Tuple:
// flat is the checkpoint hash as field/value pairs, blobs the stored values
// aligned with its "c:" fields, extra the parent's writes (legacy only).
func (s *Saver) decodeTuple(ctx context.Context, thread, ns, id string, flat, blobs, extra any) (*checkpoint.Tuple, error) {
	pairs, ok := flat.([]any)
	if !ok || len(pairs)%2 != 0 {
		return nil, corrupt("checkpoint %q: hash reply of %T", id, flat)
	}
	var d reply
	values := d.list(blobs)
	channels, metadata, writes := countFields(pairs)
	t := &checkpoint.Tuple{
		Config: checkpoint.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: id},
		Checkpoint: checkpoint.Checkpoint{
			ID:              id,
			ChannelValues:   make(map[string]any, channels),
			ChannelVersions: make(map[string]string, channels),
		},
		Metadata: make(checkpoint.Metadata, metadata),
	}
	cp := &t.Checkpoint
	pending := make([]storedWrite, 0, writes)
	blob := 0
	for i := 0; i < len(pairs); i += 2 {
		f, v := d.str(pairs[i]), d.str(pairs[i+1])
		if d.err != nil {
			return nil, d.err
		}
		switch {
		case f == fieldV:
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, corrupt("checkpoint %q: version %q", id, v)
			}
			cp.V = n
		case f == fieldTS:
			cp.TS = v
		case f == fieldParent:
			t.ParentConfig = &checkpoint.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: v}
		case f == fieldVersionsSeen:
			seen, err := canonjson.DecodeStringMaps(v)
			if err != nil {
				return nil, corrupt("checkpoint %q: versions seen: %v", id, err)
			}
			cp.VersionsSeen = seen
		case f == fieldUpdated:
			if err := json.Unmarshal([]byte(v), &cp.UpdatedChannels); err != nil {
				return nil, corrupt("checkpoint %q: updated channels: %v", id, err)
			}
		case strings.HasPrefix(f, prefixChannel):
			ch := f[len(prefixChannel):]
			ver := storedVersion(v)
			cp.ChannelVersions[ch] = ver
			if blob >= len(values) {
				return nil, corrupt("checkpoint %q: values missing", id)
			}
			if stored := d.str(values[blob]); d.err != nil {
				return nil, d.err
			} else if stored != "" {
				val, err := s.decodeValue(ctx, channelPlace(thread, ns, ch, ver), stored)
				if err != nil {
					return nil, err
				}
				cp.ChannelValues[ch] = val
			}
			blob++
		case strings.HasPrefix(f, prefixMetadata):
			val, err := checkpoint.DecodeMetadataString(v)
			if err != nil {
				return nil, corrupt("checkpoint %q: metadata %q: %v", id, f[len(prefixMetadata):], err)
			}
			t.Metadata[f[len(prefixMetadata):]] = val
		case strings.HasPrefix(f, prefixWrite):
			w, err := s.decodeWrite(ctx, thread, ns, id, f, v)
			if err != nil {
				return nil, err
			}
			pending = append(pending, w)
		}
	}
	if cp.VersionsSeen == nil {
		cp.VersionsSeen = map[string]map[string]string{}
	}
	t.PendingWrites = sortedWrites(pending)
	if err := s.migratePendingSends(ctx, t, extra); err != nil {
		return nil, err
	}
	return t, nil
}

// countFields counts the channel, metadata and write fields of a checkpoint
// hash given as field/value pairs.
func countFields(pairs []any) (channels, metadata, writes int) {
	for i := 0; i < len(pairs); i += 2 {
		f, _ := pairs[i].(string)
		switch {
		case strings.HasPrefix(f, prefixChannel):
			channels++
		case strings.HasPrefix(f, prefixMetadata):
			metadata++
		case strings.HasPrefix(f, prefixWrite):
			writes++
		}
	}
	return channels, metadata, writes
}

// storedWrite is a pending write with its index, for ordering.
type storedWrite struct {
	checkpoint.PendingWrite
	idx int
}

// decodeWrite decodes the pending write of field, stored against checkpoint
// id of the thread and namespace.
func (s *Saver) decodeWrite(ctx context.Context, thread, ns, id, field, stored string) (storedWrite, error) {
	task, idx, ok := codec.ParseWriteField(field)
	if !ok {
		return storedWrite{}, corrupt("write field %q", field)
	}
	var parts [3]string // channel, task path, stored value
	if !unpack(stored, parts[:]) {
		return storedWrite{}, corrupt("write %q", field)
	}
	plain, err := s.open(ctx, writePlace(thread, ns, id, task, idx, parts[0]), parts[2])
	if err != nil {
		return storedWrite{}, err
	}
	val, err := codec.LoadValue(s.ser, plain)
	if err != nil {
		return storedWrite{}, corrupt("write %q: %v", field, err)
	}
	return storedWrite{checkpoint.PendingWrite{TaskID: task, Channel: parts[0], Value: val}, idx}, nil
}

// compareWrites orders writes by (task id, index).
func compareWrites(a, b storedWrite) int {
	return cmp.Or(strings.Compare(a.TaskID, b.TaskID), cmp.Compare(a.idx, b.idx))
}

// sortedWrites orders writes by (task id, index).
func sortedWrites(ws []storedWrite) []checkpoint.PendingWrite {
	slices.SortFunc(ws, compareWrites)
	out := make([]checkpoint.PendingWrite, len(ws))
	for i, w := range ws {
		out[i] = w.PendingWrite
	}
	return out
}

// migratePendingSends applies checkpoint.MigratePendingSends with the
// parent's writes to checkpoint.TasksChannel that get_tuple.lua returned.
func (s *Saver) migratePendingSends(ctx context.Context, t *checkpoint.Tuple, extra any) error {
	pairs, _ := extra.([]any)
	if t.Checkpoint.V >= 4 || t.ParentConfig == nil || len(pairs) == 0 {
		return nil
	}
	var sends []storedWrite
	for i := 0; i+1 < len(pairs); i += 2 {
		f, _ := pairs[i].(string)
		v, _ := pairs[i+1].(string)
		w, err := s.decodeWrite(ctx, t.Config.ThreadID, t.Config.CheckpointNS, t.ParentConfig.CheckpointID, f, v)
		if err != nil {
			return err
		}
		if w.Channel == checkpoint.TasksChannel {
			sends = append(sends, w)
		}
	}
	if len(sends) == 0 {
		return nil
	}
	vals := make([]any, 0, len(sends))
	for _, w := range sortedWrites(sends) {
		vals = append(vals, w.Value)
	}
	checkpoint.MigratePendingSends(&t.Checkpoint, vals)
	return nil
}

// storedVersion is the version a checkpoint's "c:" field names: the field's
// value up to its first byte 0 (versions hold none; a field written by a
// format-2 staged Put carried a call token after it).
func storedVersion(v string) string {
	if i := strings.IndexByte(v, 0); i >= 0 {
		return v[:i]
	}
	return v
}
