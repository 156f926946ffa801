package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// ForkSource is the metadata "source" of the checkpoint Fork puts on top of
// the copy (LangGraph's name for a copied state).
const ForkSource = "fork"

// Fork copies thread source to thread target with its whole history, every
// namespace (redissaver.Saver.CopyThread). With at set, it then puts on the
// target, as a child of checkpoint at (of the root graph), a new checkpoint
// that holds at's state: same channel versions (so the same values), metadata
// source "fork" and at's step plus one. That checkpoint is the target's
// latest, so a graph run on the target resumes from at's state, and the
// target's history shows the fork as a branch at at.
//
// It returns the config of the target's latest checkpoint: the fork's, or
// the copied latest one without at. Errors: checkpoint.ErrNotFound when the
// source or its checkpoint at does not exist (nothing is written);
// checkpoint.ErrInvalidConfig when the target has checkpoints (nothing is
// written) or an ID is malformed; any error of CopyThread or Put.
func Fork(ctx context.Context, s *redissaver.Saver, source, target, at string) (checkpoint.Config, error) {
	root := checkpoint.Config{ThreadID: source, CheckpointID: at}
	base, err := s.GetTuple(ctx, root)
	if err != nil {
		return checkpoint.Config{}, fmt.Errorf("fork %q: %w", source, err)
	}
	if err := s.CopyThread(ctx, source, target); err != nil {
		return checkpoint.Config{}, fmt.Errorf("copy %q to %q: %w", source, target, err)
	}
	if at == "" {
		latest, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: target})
		if err != nil {
			return checkpoint.Config{}, fmt.Errorf("read the copy %q: %w", target, err)
		}
		return latest.Config, nil
	}
	parent := checkpoint.Config{ThreadID: target, CheckpointID: base.Config.CheckpointID}
	cp := checkpoint.Checkpoint{
		V: base.Checkpoint.V, ID: checkpoint.NewID(), TS: time.Now().UTC().Format(time.RFC3339Nano),
		ChannelVersions: base.Checkpoint.ChannelVersions, VersionsSeen: base.Checkpoint.VersionsSeen,
	}
	md := checkpoint.Metadata{"source": ForkSource, "parents": map[string]any{}}
	if n, ok := Step(base.Metadata); ok {
		md["step"] = n + 1
	}
	next, err := s.Put(ctx, parent, cp, md, map[string]string{})
	if err != nil {
		return checkpoint.Config{}, fmt.Errorf("put the fork of %s on %q: %w", at, target, err)
	}
	return next, nil
}

// Step returns the metadata's "step" as an integer, whichever integral
// form the serializer or a JSON decoder gave it (a float only when whole and
// within int64).
func Step(md checkpoint.Metadata) (int64, bool) {
	switch x := md["step"].(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint64:
		return int64(x), true
	case float64:
		return int64(x), x == float64(int64(x))
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}
