package redissaver

import (
	"context"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
)

// PutWrites stores the pending writes of task taskID against the checkpoint
// cfg.CheckpointID. Each write's index is its position in writes, or the
// fixed negative index of a special channel (checkpoint.WriteIndex). Writes
// to special channels overwrite; the others are kept only if their (task,
// index) is new, so repeating a call changes nothing. taskPath is stored
// with each write.
//
// PutWrites is one atomic script and one round trip. Errors:
// checkpoint.ErrInvalidConfig when cfg lacks a thread or checkpoint ID;
// checkpoint.ErrNotFound when the checkpoint does not exist (writes always
// belong to a stored checkpoint); checkpoint.ErrInvalidCheckpoint for a value
// the serializer refuses; otherwise the Redis error, wrapped.
func (s *Saver) PutWrites(ctx context.Context, cfg checkpoint.Config, writes []checkpoint.Write, taskID, taskPath string) error {
	if err := validateAddress(cfg); err != nil {
		return err
	}
	if cfg.CheckpointID == "" {
		return invalidConfig("missing checkpoint id")
	}
	if err := keys.ValidateID(cfg.CheckpointID); err != nil {
		return notFound("checkpoint %q: %v", cfg.CheckpointID, err)
	}
	if len(writes) == 0 {
		return nil
	}
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	bound := -1
	if s.opts.Events.IncludeValues {
		bound = s.opts.Events.MaxValueBytes
	}
	event := s.eventSpec(evType, "writes", evThread, keys.Encode(th), evNS, keys.Encode(ns), evID, cfg.CheckpointID, evTask, taskID)
	args := make([]any, 0, 2+len(event)+4*len(writes))
	args = append(args, s.opts.ttlMillis(), bound)
	args = append(args, event...)
	for i, w := range writes {
		typ, data, err := s.ser.DumpsTyped(w.Value)
		if err != nil {
			return invalidCheckpoint("write %d to %q: %v", i, w.Channel, err)
		}
		idx := checkpoint.WriteIndex(w.Channel, i)
		mode := "n"
		if idx < 0 {
			mode = "o"
		}
		args = append(args, writeField(taskID, idx), pack(w.Channel, taskPath, typ, string(data)), mode, w.Channel)
	}
	keyList := []string{
		s.layout.Checkpoint(th, ns, cfg.CheckpointID),
		s.layout.Index(th, ns),
		s.layout.Blobs(th, ns),
		s.layout.Namespaces(th),
		s.layout.ThreadIndex(th),
		s.layout.Events(th),
		s.layout.Feed(s.layout.Shard(th)),
	}
	if err := s.run(ctx, scripts.PutWrites, keyList, args...).Err(); err != nil {
		if strings.HasPrefix(err.Error(), "NOTFOUND") {
			return notFound("checkpoint %q of thread %q", cfg.CheckpointID, th)
		}
		return redisErr("put writes", err)
	}
	return nil
}
