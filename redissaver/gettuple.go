package redissaver

import (
	"context"
	"errors"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// GetTuple reads the checkpoint cfg.CheckpointID of the thread and namespace
// of cfg, or the latest one (greatest ID) when cfg.CheckpointID is "", with
// its channel values, metadata, parent and pending writes: one script, one
// round trip; with RefreshOnRead it also extends the TTL. Each channel
// version the checkpoint names reads the value stored under that (channel,
// version). When the checkpoint's values hold more than 32 KiB, the script
// answers without them and a plain HMGET reads them in one more round trip,
// so that they never enter Lua (docs/storage-format.md, "Values out of
// Lua").
//
// Errors: checkpoint.ErrNotFound when there is no such checkpoint (a missing
// ID never falls back to the latest), when the thread is unknown and when
// cfg.ThreadID is "" and when the thread expired; checkpoint.ErrDataLoss when
// something the answer needs is missing (the checkpoint's hash while its
// index names it, a value its channel version points to, the thread's head
// or index): never a tuple with missing values, never an older checkpoint
// as the latest; checkpoint.ErrInvalidConfig for an over-long thread or
// namespace; ErrCorrupt for stored data it cannot decode.
func (s *Saver) GetTuple(ctx context.Context, cfg checkpoint.Config) (_ *checkpoint.Tuple, err error) {
	ctx, call := s.begin(ctx, opGetTuple)
	defer func() { call.end(err) }()
	call.address(cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
	t, err := s.getTuple(ctx, cfg)
	if err == nil && cfg.CheckpointID == "" {
		call.set(attrCheckpoint.String(t.Config.CheckpointID))
	}
	if err == nil {
		call.step(t.Metadata)
	}
	return t, err
}

func (s *Saver) getTuple(ctx context.Context, cfg checkpoint.Config) (*checkpoint.Tuple, error) {
	if cfg.ThreadID == "" {
		return nil, notFound("no thread id")
	}
	if err := validateAddress(cfg); err != nil {
		return nil, err
	}
	if cfg.CheckpointID != "" && keys.ValidateID(cfg.CheckpointID) != nil {
		return nil, notFound("checkpoint %q", cfg.CheckpointID)
	}
	return s.scriptRead(ctx, cfg, listAuto)
}

// scriptRead reads cfg's checkpoint by get_tuple.lua, leaving values of
// over 32 KiB for a plain HMGET when what is listAuto (read then in a second
// round trip; a value gone in between sends the read back to the script
// with listWhole, which reads them itself and answers for a loss).
func (s *Saver) scriptRead(ctx context.Context, cfg checkpoint.Config, what string) (*checkpoint.Tuple, error) {
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	c := s.getTupleCall(cfg, what)
	res, err := s.run(ctx, scriptrun.GetTuple, c.keys, c.args...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, notFound("thread %q namespace %q checkpoint %q", th, ns, cfg.CheckpointID)
	}
	if err != nil {
		return nil, scriptErr("get tuple", err)
	}
	items, ok := res.([]any)
	if !ok || len(items) != 5 {
		return nil, corrupt("get tuple reply of %T", res)
	}
	var d reply
	id := d.str(items[0])
	gen := d.str(items[4])
	flat := d.list(items[1])
	if d.err != nil {
		return nil, d.err
	}
	r := []cpReply{{id: id, thread: th, ns: ns, gen: gen, flat: flat, values: items[2], extra: items[3]}}
	if err := s.readValues(ctx, "get tuple", r); errors.Is(err, errValueGone) && what == listAuto {
		return s.scriptRead(ctx, cfg, listWhole)
	} else if err != nil {
		return nil, err
	}
	return s.decodeTuple(ctx, th, ns, id, flat, r[0].values, items[3])
}

// getTupleCall builds the keys and arguments of get_tuple.lua, the values
// of over 32 KiB left out when what is listAuto ("1"; listWhole: "0").
func (s *Saver) getTupleCall(cfg checkpoint.Config, what string) scriptCall {
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	shard := s.layout.Shard(th)
	out := "0"
	if what == listAuto {
		out = "1"
	}
	return scriptCall{
		keys: []string{s.layout.Head(th), s.layout.Threads(shard)},
		args: []any{s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), cfg.CheckpointID, s.refreshMillis(), out},
	}
}

// refreshMillis is the lease a read renews: the TTL with RefreshOnRead, else 0.
func (s *Saver) refreshMillis() int64 {
	if s.opts.RefreshOnRead {
		return s.opts.ttlMillis()
	}
	return 0
}
