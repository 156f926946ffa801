package redissaver

import (
	"context"
	"errors"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/internal/strbox"
	"github.com/redis/go-redis/v9"
)

// GetTuple reads the checkpoint cfg.CheckpointID of the thread and namespace
// of cfg, or the latest one (greatest ID) when cfg.CheckpointID is "", with
// its channel values, metadata, parent and pending writes. It is one round
// trip; with RefreshOnRead it also extends the TTL. When it reads the
// checkpoint this saver last wrote or read in the namespace, or one it read
// by id or listed (the last 4,096 of those), plain reads in one transaction
// confirm the prediction and read the checkpoint, with no script; when the
// prediction is wrong, the script reads the answer in a second round trip
// and, when another writer made it wrong, confirms the namespace's later
// predictions in the same transaction as the plain reads (as it always does
// with a TTL); a thread or checkpoint deleted is not another writer, it is
// forgotten (docs/storage-format.md, "Reading a checkpoint"). When the
// script reads a checkpoint whose values hold more than 32 KiB, it answers
// without them, and a plain HMGET reads them in one more round trip, so
// that they never enter Lua ("Values out of Lua").
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
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	hk := hintKey(th, ns)
	hint, predict := s.tuples.get(hk)
	predict = predict && (cfg.CheckpointID == "" || cfg.CheckpointID == hint.id)
	if !predict && cfg.CheckpointID != "" {
		hint, predict = s.byID.get(idKey(th, ns, cfg.CheckpointID))
	}
	if predict && s.confirmsPlain(hk) {
		// The prediction confirmed by plain reads, no script; refuted, the
		// script reads the answer (a second round trip). A thread still
		// there with the predicted checkpoint has another writer: the
		// script confirms the namespace's later predictions itself. A
		// thread or checkpoint gone leaves nothing to predict of it.
		r, err := s.readPlain(ctx, th, ns, hint, cfg.CheckpointID == "")
		if err != nil {
			return nil, redisErr("get tuple", err)
		}
		if h, got, ok := r.confirmed(hint); ok {
			return s.finishPredicted(th, ns, hint, h, got, cfg.CheckpointID == "")
		}
		switch {
		case r.threadGone():
			s.forgetThread(th)
		case r.checkpointGone(hint):
			// Deleted (DeleteForRuns, Prune, lost), not written over:
			// no sign of another writer.
			s.forgetCheckpoint(th, ns, hint)
		default:
			s.contended.set(hk, struct{}{})
		}
		predict = false
	}
	return s.scriptRead(ctx, cfg, hint, predict, s.valuesAsk(th, readTuple))
}

// scriptRead reads cfg's checkpoint by get_tuple.lua: confirming the
// prediction hint in the same transaction when predict, leaving values of
// over 32 KiB for a plain HMGET when what is listAuto (read then in a second
// round trip; a value gone in between sends the read back to the script
// with listWhole, which reads them itself, as it does when the saver's last
// read of the thread found them small: valuesAsk).
func (s *Saver) scriptRead(ctx context.Context, cfg checkpoint.Config, hint tupleHint, predict bool, what string) (*checkpoint.Tuple, error) {
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	var (
		res       any
		err       error
		predicted []any
		hash      map[string]string
	)
	sc := s.getTupleCall(cfg, what)
	if predict {
		// The hash and the values of the checkpoint the hint names, by a
		// plain HGETALL and HMGET after the script, which confirms the
		// prediction.
		valuesKey := hint.hmget[1].(string)
		cpKey := s.layout.Checkpoint(th, hint.gen, ns, hint.id)
		sc.args[5], sc.args[6] = hint.id, hint.token
		cmd, after := scriptrun.RunTx(ctx, s.rdb, scriptrun.GetTuple, nil, func(p redis.Pipeliner) {
			p.HGetAll(ctx, cpKey)
			p.Do(ctx, slices.Clone(hint.hmget)...) // the hint is shared: go-redis keeps the arguments it is given
		}, append(sc.keys, valuesKey), sc.args...)
		res, err = cmd.Result()
		if redis.HasErrorPrefix(err, "OOM") || redis.HasErrorPrefix(err, "EXECABORT") {
			// Redis refused the transaction as a whole (out of memory, it
			// may hold a write): nothing ran. A read alone is answered.
			predict = false
			sc.args[5], sc.args[6] = "", ""
			res, err = s.run(ctx, scriptrun.GetTuple, sc.keys, sc.args...).Result()
		} else if err == nil && len(after) == 2 {
			hg, ok1 := after[0].(*redis.MapStringStringCmd)
			hm, ok2 := after[1].(*redis.Cmd)
			if ok1 && ok2 && hg.Err() == nil {
				hash = hg.Val()
				predicted, _ = hm.Slice() // nil on an error, which the confirmed case reports as corrupt
			}
		}
	} else {
		res, err = s.run(ctx, scriptrun.GetTuple, sc.keys, sc.args...).Result()
	}
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
	if d.err != nil {
		return nil, d.err
	}
	if items[1] == nil && items[2] == nil {
		// get_tuple.lua confirmed the prediction: the hash and the values
		// are the HGETALL's and the HMGET's.
		if !predict || predicted == nil || id != hint.id || gen != hint.gen {
			return nil, corrupt("get tuple: the checkpoint neither in the reply nor read")
		}
		return s.finishPredicted(th, ns, hint, hash, predicted, cfg.CheckpointID == "")
	}
	flat := d.list(items[1])
	if d.err != nil {
		return nil, d.err
	}
	r := []cpReply{{id: id, thread: th, ns: ns, gen: gen, flat: flat, values: items[2], extra: items[3]}}
	if err := s.readValues(ctx, "get tuple", r); errors.Is(err, errValueGone) && what == listAuto {
		return s.scriptRead(ctx, cfg, hint, false, listWhole)
	} else if err != nil {
		return nil, err
	}
	t, err := s.decodeTuple(th, ns, id, flat, r[0].values, items[3])
	if err != nil {
		return nil, err
	}
	s.learnValues(th, readTuple, valuesBytes(r[0].values))
	s.rememberRead(th, ns, id, gen, flat, cfg.CheckpointID == "")
	return t, nil
}

// finishPredicted decodes a confirmed prediction: the checkpoint's hash and
// its values as the plain HGETALL and HMGET read them.
func (s *Saver) finishPredicted(th, ns string, hint tupleHint, hash map[string]string, got []any, latest bool) (*checkpoint.Tuple, error) {
	flat := strbox.Pairs(hash)
	if len(flat) == 0 {
		return nil, corrupt("get tuple: the confirmed checkpoint's hash read empty")
	}
	values, err := alignValues(hint, flat, got, hint.hmget[1].(string))
	if err != nil {
		return nil, err
	}
	t, err := s.decodeTuple(th, ns, hint.id, flat, values, nil)
	if err != nil {
		return nil, err
	}
	s.learnValues(th, readTuple, valuesBytes(values))
	s.rememberRead(th, ns, hint.id, hint.gen, flat, latest)
	return t, nil
}

// confirmsPlain reports whether the saver confirms a prediction of the
// namespace of hint key hk by plain reads: not with a TTL (leases are
// judged on Redis's clock, and renewed by reads with RefreshOnRead: the
// script does both), nor once a plain confirmation of the namespace was
// refuted (another saver writes there: the script confirms in the same
// round trip).
func (s *Saver) confirmsPlain(hk string) bool {
	if s.opts.TTL > 0 {
		return false
	}
	_, shared := s.contended.get(hk)
	return !shared
}

// getTupleCall builds the keys and arguments of get_tuple.lua, predicting
// nothing (ARGV[6] and ARGV[7] ""), the values of over 32 KiB left out when
// what is listAuto ("1"; listWhole: "0").
func (s *Saver) getTupleCall(cfg checkpoint.Config, what string) scriptCall {
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	shard := s.layout.Shard(th)
	out := "0"
	if what == listAuto {
		out = "1"
	}
	return scriptCall{
		keys: []string{s.layout.Head(th), s.layout.Threads(shard)},
		args: []any{s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), cfg.CheckpointID, s.refreshMillis(), "", "", out},
	}
}

// refreshMillis is the lease a read renews: the TTL with RefreshOnRead, else 0.
func (s *Saver) refreshMillis() int64 {
	if s.opts.RefreshOnRead {
		return s.opts.ttlMillis()
	}
	return 0
}
