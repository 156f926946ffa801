package redissaver

import (
	"context"
	"errors"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
	"github.com/redis/go-redis/v9"
)

// GetTuple reads the checkpoint cfg.CheckpointID of the thread and namespace
// of cfg, or the latest one (greatest ID) when cfg.CheckpointID is "", with
// its channel values, metadata, parent and pending writes. It is one script
// call and one round trip; with RefreshOnRead it also extends the TTL.
//
// Errors: checkpoint.ErrNotFound when there is no such checkpoint (a missing
// ID never falls back to the latest), when the thread is unknown and when
// cfg.ThreadID is "" and when the thread expired; checkpoint.ErrDataLoss when
// something the answer needs is missing (the checkpoint's hash while its
// index names it, a value its channel version points to, the thread's head
// or index): never a tuple with missing values, never an older checkpoint
// as the latest; checkpoint.ErrInvalidConfig for an over-long thread or
// namespace; ErrCorrupt for stored data it cannot decode.
func (s *Saver) GetTuple(ctx context.Context, cfg checkpoint.Config) (*checkpoint.Tuple, error) {
	if cfg.ThreadID == "" {
		return nil, notFound("no thread id")
	}
	if err := validateAddress(cfg); err != nil {
		return nil, err
	}
	if cfg.CheckpointID != "" && keys.ValidateID(cfg.CheckpointID) != nil {
		return nil, notFound("checkpoint %q", cfg.CheckpointID)
	}
	sc := s.getTupleCall(cfg)
	res, err := s.run(ctx, scripts.GetTuple, sc.keys, sc.args...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, notFound("thread %q namespace %q checkpoint %q", cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
	}
	if err != nil {
		return nil, scriptErr("get tuple", err)
	}
	items, ok := res.([]any)
	if !ok || len(items) != 4 {
		return nil, corrupt("get tuple reply of %T", res)
	}
	var d reply
	id := d.str(items[0])
	if d.err != nil {
		return nil, d.err
	}
	return s.decodeTuple(cfg.ThreadID, cfg.CheckpointNS, id, items[1], items[2], items[3])
}

// getTupleCall builds the keys and arguments of get_tuple.lua.
func (s *Saver) getTupleCall(cfg checkpoint.Config) scriptCall {
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	shard := s.layout.Shard(th)
	return scriptCall{
		keys: []string{s.layout.Head(th), s.layout.Threads(shard)},
		args: []any{s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), cfg.CheckpointID, s.refreshMillis()},
	}
}

// refreshMillis is the lease a read renews: the TTL with RefreshOnRead, else 0.
func (s *Saver) refreshMillis() int64 {
	if s.opts.RefreshOnRead {
		return s.opts.ttlMillis()
	}
	return 0
}
