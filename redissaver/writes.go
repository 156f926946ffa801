package redissaver

import (
	"context"
	"github.com/graphstate/redcheck/internal/codec"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// PutWrites stores the pending writes of task taskID against the checkpoint
// cfg.CheckpointID. Each write's index is its position in writes, or the
// fixed negative index of a special channel (checkpoint.WriteIndex). Writes
// to special channels overwrite; the others are kept only if their (task,
// index) is new, so repeating a call changes nothing. taskPath is stored
// with each write.
//
// PutWrites is one atomic script and one round trip; with a TTL it renews
// the thread's lease. Writes to a checkpoint that is not stored yet (its
// thread may not exist yet either) are kept for it, as LangGraph's savers
// keep them under the checkpoint id: LangGraph's runtime sends a step's
// writes while the Put of its checkpoint is under way. The Put that stores
// the checkpoint takes them; no read shows them before, or on another
// checkpoint; writes whose checkpoint never comes are reclaimed after 10
// minutes (docs/storage-format.md, "Pending writes before their
// checkpoint").
//
// Errors, all before anything is written: checkpoint.ErrInvalidConfig when
// cfg lacks a thread or checkpoint ID or the ID is malformed;
// checkpoint.ErrDataLoss when the checkpoint's hash is missing while its
// index names it, or the thread's head while its registry entry exists;
// checkpoint.ErrInvalidCheckpoint for a value the serializer refuses;
// otherwise the Redis error, wrapped.
func (s *Saver) PutWrites(ctx context.Context, cfg checkpoint.Config, writes []checkpoint.Write, taskID, taskPath string) (err error) {
	ctx, call := s.begin(ctx, opPutWrites)
	defer func() { call.end(err) }()
	call.address(cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
	if err := validateAddress(cfg); err != nil {
		return err
	}
	if cfg.CheckpointID == "" {
		return invalidConfig("missing checkpoint id")
	}
	if err := keys.ValidateID(cfg.CheckpointID); err != nil {
		return invalidConfig("checkpoint %q: %v", cfg.CheckpointID, err)
	}
	if len(writes) == 0 {
		return nil
	}
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	shard := s.layout.Shard(th)
	bound := -1
	if s.opts.Events.IncludeValues {
		bound = s.opts.Events.MaxValueBytes
	}
	// put_writes.lua builds the event (t "writes", th, ns, id, task, ch) from
	// its arguments: each one costs Redis about 600 instructions to enter Lua.
	maxlen, feedMaxlen := s.eventBounds()
	trace := s.traceArgs(ctx)
	args := make([]any, 0, 12+len(trace)+4*len(writes))
	args = append(args, s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), cfg.CheckpointID,
		s.opts.ttlMillis(), bound, maxEventValues, s.opts.Events.MaxEventBytes, keys.NewGen(), maxlen, feedMaxlen, taskID)
	args = append(args, trace...)
	for i, w := range writes {
		typ, data, err := s.ser.DumpsTyped(w.Value)
		if err != nil {
			return unserializable(err, "write %d to %q", i, w.Channel)
		}
		if typ == "" {
			return invalidCheckpoint("write %d to %q: serializer returned an empty type for %T", i, w.Channel, w.Value)
		}
		idx := checkpoint.WriteIndex(w.Channel, i)
		mode := "n"
		if idx < 0 {
			mode = "o"
		}
		stored, err := s.storedValue(ctx, writePlace(th, ns, cfg.CheckpointID, taskID, idx, w.Channel), typ, data)
		if err != nil {
			return err
		}
		args = append(args, codec.WriteField(taskID, idx), pack(w.Channel, taskPath, stored), mode, w.Channel)
	}
	keyList := []string{s.layout.Head(th), s.layout.Threads(shard), s.layout.Events(th), s.layout.Feed(shard)}
	if err := s.run(ctx, scriptrun.PutWrites, keyList, args...).Err(); err != nil {
		return scriptErr("put writes", err)
	}
	return nil
}
