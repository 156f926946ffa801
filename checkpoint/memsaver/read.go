package memsaver

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
)

// GetTuple reads the checkpoint cfg.CheckpointID of the thread and
// namespace of cfg, or the one with the greatest ID when cfg.CheckpointID is
// "". It returns an error wrapping checkpoint.ErrNotFound when there is no
// such checkpoint or cfg.ThreadID is "", checkpoint.ErrInvalidConfig for an
// over-long thread ID or namespace, and checkpoint.ErrSerialization when a
// stored value cannot be decoded.
func (s *Saver) GetTuple(ctx context.Context, cfg checkpoint.Config) (*checkpoint.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkConfigNames(cfg); err != nil {
		return nil, err
	}
	if cfg.ThreadID == "" {
		return nil, fmt.Errorf("memsaver: get tuple: missing thread id: %w", checkpoint.ErrNotFound)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.namespaceOf(cfg.ThreadID, cfg.CheckpointNS)
	rec := n.find(cfg.CheckpointID)
	if rec == nil {
		return nil, fmt.Errorf("memsaver: checkpoint %q of thread %q, namespace %q: %w",
			cfg.CheckpointID, cfg.ThreadID, cfg.CheckpointNS, checkpoint.ErrNotFound)
	}
	return s.tuple(cfg.ThreadID, cfg.CheckpointNS, n, rec)
}

// listed is a checkpoint selected by List, before decoding.
type listed struct {
	tid, ns string
	n       *namespace
	rec     *record
}

// List yields the checkpoints selected by q: newest ID first across threads
// and namespaces, equal IDs by thread ID then namespace, both descending.
// The selection is taken when iteration starts and decoded before the first
// tuple is yielded, so the loop body may call the Saver. Errors (an
// over-long thread ID or namespace: checkpoint.ErrInvalidConfig; a filter or
// value that cannot be encoded or decoded) are yielded with a nil tuple and
// end the iteration.
func (s *Saver) List(ctx context.Context, q checkpoint.ListQuery) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		tuples, err := s.list(ctx, q)
		for _, tp := range tuples {
			if !yield(tp, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}
}

// list returns the tuples List yields, and the error that ends them.
func (s *Saver) list(ctx context.Context, q checkpoint.ListQuery) ([]*checkpoint.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName("thread id", q.ThreadID); err != nil {
		return nil, err
	}
	if q.CheckpointNS != nil {
		if err := checkName("checkpoint namespace", *q.CheckpointNS); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var sel []listed
	for tid, th := range s.threads {
		if q.ThreadID != "" && tid != q.ThreadID {
			continue
		}
		for ns, n := range th.namespaces {
			if q.CheckpointNS != nil && ns != *q.CheckpointNS {
				continue
			}
			for id, rec := range n.checkpoints {
				if q.CheckpointID != "" && id != q.CheckpointID {
					continue
				}
				if q.Before != "" && id >= q.Before {
					continue
				}
				if len(q.Filter) > 0 {
					md, err := decodeMetadata(rec.metadata)
					if err != nil {
						return nil, err
					}
					ok, err := md.Matches(q.Filter)
					if err != nil {
						return nil, fmt.Errorf("memsaver: list: %w", err)
					}
					if !ok {
						continue
					}
				}
				sel = append(sel, listed{tid: tid, ns: ns, n: n, rec: rec})
			}
		}
	}
	slices.SortFunc(sel, func(a, b listed) int {
		return cmp.Or(cmp.Compare(b.rec.id, a.rec.id), cmp.Compare(b.tid, a.tid), cmp.Compare(b.ns, a.ns))
	})
	if q.Limit > 0 && len(sel) > q.Limit {
		sel = sel[:q.Limit]
	}
	out := make([]*checkpoint.Tuple, 0, len(sel))
	for _, l := range sel {
		tp, err := s.tuple(l.tid, l.ns, l.n, l.rec)
		if err != nil {
			return out, err
		}
		out = append(out, tp)
	}
	return out, nil
}

// tuple decodes rec, stored in namespace n of (tid, ns), into a Tuple.
// ChannelValues is rebuilt from the channel versions and the stored values.
// A checkpoint with V < 4 whose parent holds writes to
// checkpoint.TasksChannel gets their values, in (task ID, index) order, as
// the channel's value (legacy pending sends), with the greatest existing
// channel version as its version (checkpoint.MigratedTasksVersion when there is none).
// The caller holds s.mu.
func (s *Saver) tuple(tid, ns string, n *namespace, rec *record) (*checkpoint.Tuple, error) {
	values := make(map[string]any, len(rec.versions))
	for ch, ver := range rec.versions {
		v, ok, err := s.value(n, ch, ver)
		if err != nil {
			return nil, err
		}
		if ok {
			values[ch] = v
		}
	}
	md, err := decodeMetadata(rec.metadata)
	if err != nil {
		return nil, err
	}
	writes, err := s.pendingWrites(rec, nil)
	if err != nil {
		return nil, err
	}
	tp := &checkpoint.Tuple{
		Config: checkpoint.Config{ThreadID: tid, CheckpointNS: ns, CheckpointID: rec.id},
		Checkpoint: checkpoint.Checkpoint{
			V:               rec.v,
			ID:              rec.id,
			TS:              rec.ts,
			ChannelValues:   values,
			ChannelVersions: cloneVersions(rec.versions),
			VersionsSeen:    cloneSeen(rec.seen),
			UpdatedChannels: slices.Clone(rec.updated),
		},
		Metadata:      md,
		PendingWrites: writes,
	}
	if rec.parentID != "" {
		tp.ParentConfig = &checkpoint.Config{ThreadID: tid, CheckpointNS: ns, CheckpointID: rec.parentID}
	}
	if rec.v < 4 && rec.parentID != "" {
		if parent := n.checkpoints[rec.parentID]; parent != nil {
			sends, err := s.pendingWrites(parent, isChannel(checkpoint.TasksChannel))
			if err != nil {
				return nil, err
			}
			if len(sends) > 0 {
				list := make([]any, len(sends))
				for i, w := range sends {
					list[i] = w.Value
				}
				checkpoint.MigratePendingSends(&tp.Checkpoint, list)
			}
		}
	}
	return tp, nil
}

// value decodes the value of channel ch at version ver in n. ok is false
// when no value is stored or the empty marker is.
func (s *Saver) value(n *namespace, ch, ver string) (v any, ok bool, err error) {
	b, found := n.blobs[blobKey{ch, ver}]
	if !found || b.empty {
		return nil, false, nil
	}
	v, err = s.serde.LoadsTyped(b.typ, b.data)
	if err != nil {
		return nil, false, fmt.Errorf("memsaver: channel %q version %q: %w: %w", ch, ver, checkpoint.ErrSerialization, err)
	}
	return v, true, nil
}

// pendingWrites decodes the writes of rec in (task ID, index) order: all of
// them when keep is nil, else those whose channel keep accepts. The result
// is never nil.
func (s *Saver) pendingWrites(rec *record, keep func(channel string) bool) ([]checkpoint.PendingWrite, error) {
	out := []checkpoint.PendingWrite{}
	for _, k := range sortedWrites(rec.writes) {
		w := rec.writes[k]
		if keep != nil && !keep(w.channel) {
			continue
		}
		v, err := s.serde.LoadsTyped(w.typ, w.data)
		if err != nil {
			return nil, fmt.Errorf("memsaver: write (%q, %d) of checkpoint %q: %w: %w", k.taskID, k.idx, rec.id, checkpoint.ErrSerialization, err)
		}
		out = append(out, checkpoint.PendingWrite{TaskID: k.taskID, Channel: w.channel, Value: v})
	}
	return out, nil
}

// decodeMetadata decodes stored metadata; the result is never nil.
func decodeMetadata(stored map[string][]byte) (checkpoint.Metadata, error) {
	md := make(checkpoint.Metadata, len(stored))
	for k, data := range stored {
		v, err := checkpoint.DecodeMetadataValue(data)
		if err != nil {
			return nil, fmt.Errorf("memsaver: metadata %q: %w", k, err)
		}
		md[k] = v
	}
	return md, nil
}

// isChannel returns a pendingWrites filter accepting only channel.
func isChannel(channel string) func(string) bool {
	return func(c string) bool { return c == channel }
}
