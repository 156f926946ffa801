package redissaver

import (
	"context"
	"errors"
	mb "github.com/graphstate/redcheck/internal/member"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// shardWalk is a walk over one shard's index with the members it found and
// has not yet merged.
type shardWalk struct {
	*walk
	buf []string
}

// listMerged lists every thread of a saver with several shards: each round
// asks every shard that has no buffered members for its next matching
// members (one pipelined round trip), merges them newest first, and reads
// the page's checkpoints (a second pipelined round trip).
func (s *Saver) listMerged(ctx context.Context, l *lister, yield func(*checkpoint.Tuple, error) bool) {
	walks := make([]*shardWalk, s.layout.Shards())
	for i := range walks {
		walks[i] = &shardWalk{walk: newWalk(s.layout.All(i), "shard", s.layout.ShardBase(i), "", "", l.q)}
	}
	for l.left != 0 {
		paged(ctx)
		page := l.page(s.opts.PageSize)
		if err := s.refill(ctx, l, walks, page); err != nil {
			yield(nil, err)
			return
		}
		batch, err := l.sameGens(mergeMembers(walks, page))
		if err != nil {
			yield(nil, err)
			return
		}
		if len(batch) == 0 {
			if allDone(walks) {
				return
			}
			continue
		}
		tuples, err := s.readMembers(ctx, batch)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, t := range tuples {
			if !yield(t, nil) {
				return
			}
			if l.left > 0 {
				l.left--
			}
		}
	}
}

// sameGens returns the members of the generation of their thread that the
// listing met first (lister.firstGen).
func (l *lister) sameGens(members []string) ([]string, error) {
	out := members[:0]
	for _, m := range members {
		_, thread, _, gen, err := mb.Parse(m)
		if err != nil {
			return nil, corrupt("%v", err)
		}
		if l.firstGen(thread, gen) {
			out = append(out, m)
		}
	}
	return out, nil
}

// refill fetches the next members of every shard whose buffer is empty.
func (s *Saver) refill(ctx context.Context, l *lister, walks []*shardWalk, page int) error {
	var calls []scriptCall
	var which []*shardWalk
	for _, w := range walks {
		if len(w.buf) == 0 && !w.done {
			calls = append(calls, w.call(l, page, listMembers))
			which = append(which, w)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	cmds, err := s.runPipelined(ctx, scriptrun.List, calls)
	if err != nil {
		return scriptErr("list", err)
	}
	for i, cmd := range cmds {
		res, err := cmd.Slice()
		if err != nil {
			return scriptErr("list", err)
		}
		next, gen, items, err := listReply(res)
		if err != nil {
			return err
		}
		which[i].advance(next, gen)
		for _, it := range items {
			m, ok := it.(string)
			if !ok {
				return corrupt("list member of %T", it)
			}
			which[i].buf = append(which[i].buf, m)
		}
	}
	return nil
}

// mergeMembers takes up to n members, greatest first, while every shard that
// may still hold greater ones has some buffered.
func mergeMembers(walks []*shardWalk, n int) []string {
	var out []string
	for len(out) < n {
		var best *shardWalk
		for _, w := range walks {
			if len(w.buf) == 0 {
				if !w.done {
					return out // its next members are unknown: refill first
				}
				continue
			}
			if best == nil || strings.Compare(w.buf[0], best.buf[0]) > 0 {
				best = w
			}
		}
		if best == nil {
			return out
		}
		out = append(out, best.buf[0])
		best.buf = best.buf[1:]
	}
	return out
}

func allDone(walks []*shardWalk) bool {
	for _, w := range walks {
		if !w.done || len(w.buf) > 0 {
			return false
		}
	}
	return true
}

// readMembers reads the checkpoints named by shard index members, in order,
// in one pipelined round trip of get_tuple.lua; the values it leaves out of
// Lua (over 32 KiB a checkpoint) in a second (readValues), and when one of
// those is gone in between, the checkpoints again with their values.
// Checkpoints deleted in the meantime (or whose thread was replaced) are left
// out; lost data is an error.
func (s *Saver) readMembers(ctx context.Context, members []string) ([]*checkpoint.Tuple, error) {
	replies, err := s.readMembersAs(ctx, members, listAuto)
	if errors.Is(err, errValueGone) {
		replies, err = s.readMembersAs(ctx, members, listWhole)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*checkpoint.Tuple, 0, len(replies))
	for _, r := range replies {
		t, err := s.decodeTuple(ctx, r.thread, r.ns, r.id, r.flat, r.values, r.extra)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// readMembersAs reads the checkpoints of members by get_tuple.lua, their
// values as what says (listAuto: those it leaves out by readValues).
func (s *Saver) readMembersAs(ctx context.Context, members []string, what string) ([]cpReply, error) {
	calls := make([]scriptCall, len(members))
	cfgs := make([]checkpoint.Config, len(members))
	for i, m := range members {
		id, thread, ns, _, err := mb.Parse(m)
		if err != nil {
			return nil, corrupt("%v", err)
		}
		cfgs[i] = checkpoint.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: id}
		calls[i] = s.getTupleCall(cfgs[i], what)
	}
	cmds, err := s.runPipelined(ctx, scriptrun.GetTuple, calls)
	if err != nil {
		return nil, scriptErr("list", err)
	}
	out := make([]cpReply, 0, len(members))
	for i, cmd := range cmds {
		res, err := cmd.Slice()
		if errors.Is(err, redis.Nil) {
			continue // deleted since the first round trip
		}
		if err != nil {
			return nil, scriptErr("list", err)
		}
		if len(res) != 5 {
			return nil, corrupt("get tuple reply of %d items", len(res))
		}
		var d reply
		gen := d.str(res[4])
		if d.err != nil {
			return nil, d.err
		}
		out = append(out, cpReply{id: cfgs[i].CheckpointID, thread: cfgs[i].ThreadID, ns: cfgs[i].CheckpointNS, gen: gen,
			flat: res[1], values: res[2], extra: res[3]})
	}
	if err := s.readValues(ctx, "list", out); err != nil {
		return nil, err
	}
	return out, nil
}
