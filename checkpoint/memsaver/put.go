package memsaver

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
)

// Put stores cp in the thread and namespace of cfg with cfg.CheckpointID as
// its parent, and returns the Config of the stored checkpoint.
//
// Only the channels of newVersions have a value written, one per (thread,
// namespace, channel, version); a channel of newVersions missing from
// cp.ChannelValues gets an empty marker and is absent on read. Values are
// serialized, so the caller may reuse cp afterwards. Metadata is stored as
// the canonical JSON of each value (checkpoint.EncodeMetadataValue). Putting
// an existing ID replaces its checkpoint, metadata and parent and keeps its
// pending writes.
//
// Errors wrap checkpoint.ErrInvalidConfig for a missing thread ID, a thread
// ID or namespace longer than MaxNameLen or a malformed parent ID, and
// checkpoint.ErrInvalidCheckpoint for a malformed checkpoint ID (empty,
// longer than MaxIDLen, or holding a byte outside 0x21..0x7e or one of
// % : { } * ? [ ] \), metadata that is not JSON or a value the serializer
// refuses.
func (s *Saver) Put(ctx context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string) (checkpoint.Config, error) {
	if err := ctx.Err(); err != nil {
		return checkpoint.Config{}, err
	}
	if cfg.ThreadID == "" {
		return checkpoint.Config{}, fmt.Errorf("memsaver: put: missing thread id: %w", checkpoint.ErrInvalidConfig)
	}
	if err := checkConfigNames(cfg); err != nil {
		return checkpoint.Config{}, err
	}
	if cfg.CheckpointID != "" && !validID(cfg.CheckpointID) {
		return checkpoint.Config{}, fmt.Errorf("memsaver: put: malformed parent id %q: %w", cfg.CheckpointID, checkpoint.ErrInvalidConfig)
	}
	if !validID(cp.ID) {
		return checkpoint.Config{}, fmt.Errorf("memsaver: put: malformed checkpoint id %q: %w", cp.ID, checkpoint.ErrInvalidCheckpoint)
	}
	meta := make(map[string][]byte, len(md))
	for k, v := range md {
		data, err := checkpoint.EncodeMetadataValue(v)
		if err != nil {
			return checkpoint.Config{}, fmt.Errorf("memsaver: put: metadata %q: %w", k, err)
		}
		meta[k] = data
	}
	blobs := make(map[blobKey]blob, len(newVersions))
	for ch, ver := range newVersions {
		v, ok := cp.ChannelValues[ch]
		if !ok {
			blobs[blobKey{ch, ver}] = blob{empty: true}
			continue
		}
		typ, data, err := s.serde.DumpsTyped(v)
		if err != nil {
			return checkpoint.Config{}, fmt.Errorf("memsaver: put: channel %q: %w: %w: %w", ch, checkpoint.ErrInvalidCheckpoint, checkpoint.ErrSerialization, err)
		}
		blobs[blobKey{ch, ver}] = blob{typ: typ, data: data}
	}
	rec := &record{
		v:        cp.V,
		id:       cp.ID,
		ts:       cp.TS,
		versions: cloneVersions(cp.ChannelVersions),
		seen:     cloneSeen(cp.VersionsSeen),
		updated:  slices.Clone(cp.UpdatedChannels),
		parentID: cfg.CheckpointID,
		metadata: meta,
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.threads[cfg.ThreadID]
	if th == nil {
		th = &thread{namespaces: map[string]*namespace{}}
		s.threads[cfg.ThreadID] = th
	}
	n := th.namespaces[cfg.CheckpointNS]
	if n == nil {
		n = &namespace{checkpoints: map[string]*record{}, blobs: map[blobKey]blob{}}
		th.namespaces[cfg.CheckpointNS] = n
	}
	old := n.checkpoints[cp.ID]
	if cfg.CheckpointID == cp.ID {
		// In place: LangGraph's runtime puts a loaded checkpoint again under
		// its own id; it keeps its parent.
		if old == nil {
			return checkpoint.Config{}, fmt.Errorf("memsaver: put: checkpoint %q is not stored: it cannot be replaced in place: %w", cp.ID, checkpoint.ErrInvalidCheckpoint)
		}
		rec.parentID = old.parentID
	}
	maps.Copy(n.blobs, blobs)
	ek := earlyKey{cfg.ThreadID, cfg.CheckpointNS, cp.ID}
	switch {
	case old != nil:
		rec.writes = old.writes
	case s.early[ek] != nil:
		rec.writes = s.early[ek]
		delete(s.early, ek)
	default:
		rec.writes = map[writeKey]storedWrite{}
	}
	n.checkpoints[cp.ID] = rec
	return checkpoint.Config{ThreadID: cfg.ThreadID, CheckpointNS: cfg.CheckpointNS, CheckpointID: cp.ID}, nil
}

// PutWrites stores writes of task taskID against the checkpoint
// cfg.CheckpointID. The write at position i gets the index
// checkpoint.WriteIndex(channel, i); a write whose (task ID, index) is
// already stored is ignored, except for the special channels (negative
// indices), which overwrite.
//
// Errors wrap checkpoint.ErrInvalidConfig for a missing thread or checkpoint
// ID or an over-long thread ID or namespace, checkpoint.ErrInvalidCheckpoint
// for a value the serializer refuses. Writes to a checkpoint not stored yet
// are kept until its Put, which takes them.
func (s *Saver) PutWrites(ctx context.Context, cfg checkpoint.Config, writes []checkpoint.Write, taskID, taskPath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if cfg.ThreadID == "" {
		return fmt.Errorf("memsaver: put writes: missing thread id: %w", checkpoint.ErrInvalidConfig)
	}
	if cfg.CheckpointID == "" {
		return fmt.Errorf("memsaver: put writes: missing checkpoint id: %w", checkpoint.ErrInvalidConfig)
	}
	if err := checkConfigNames(cfg); err != nil {
		return err
	}
	encoded := make([]storedWrite, len(writes))
	for i, w := range writes {
		typ, data, err := s.serde.DumpsTyped(w.Value)
		if err != nil {
			return fmt.Errorf("memsaver: put writes: channel %q: %w: %w: %w", w.Channel, checkpoint.ErrInvalidCheckpoint, checkpoint.ErrSerialization, err)
		}
		encoded[i] = storedWrite{channel: w.Channel, taskPath: taskPath, typ: typ, data: data}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var stored map[writeKey]storedWrite
	if rec := s.namespaceOf(cfg.ThreadID, cfg.CheckpointNS).find(cfg.CheckpointID); rec != nil {
		stored = rec.writes
	} else {
		// Not put yet: kept for the checkpoint's Put.
		ek := earlyKey{cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID}
		if s.early == nil {
			s.early = map[earlyKey]map[writeKey]storedWrite{}
		}
		if s.early[ek] == nil {
			s.early[ek] = map[writeKey]storedWrite{}
		}
		stored = s.early[ek]
	}
	for i, w := range encoded {
		key := writeKey{taskID: taskID, idx: checkpoint.WriteIndex(w.channel, i)}
		if _, exists := stored[key]; exists && key.idx >= 0 {
			continue
		}
		stored[key] = w
	}
	return nil
}

// cloneVersions copies a version map; the copy is never nil.
func cloneVersions(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}

// cloneSeen deep-copies a versions-seen map; the copy is never nil, a nil
// inner map stays nil.
func cloneSeen(m map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(m))
	for node, vs := range m {
		if vs == nil {
			out[node] = nil
			continue
		}
		out[node] = cloneVersions(vs)
	}
	return out
}
