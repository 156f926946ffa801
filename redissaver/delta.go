package redissaver

import (
	"context"
	"errors"
	"slices"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// deltaBudget is the number of ancestors one step of DeltaChannelHistory
// visits at most; delta_history.lua also ends a step once it has read
// 10,000 fields of checkpoints, collected 4,000 writes, or collected 2 MiB
// of writes and seeds, so that a step of large ancestors (many or large
// pending writes) takes no longer than one of small ones.
const deltaBudget = 1000

// DeltaChannelHistory returns, for each of channels, the writes since its
// nearest seed: it walks from the parent of the checkpoint cfg (the latest
// one when cfg.CheckpointID is "") up the parent chain, collecting each
// ancestor's writes to the channel, and stops for that channel at the first
// ancestor that holds a value for it (a checkpoint.DeltaSnapshot or a plain
// value, returned as Seed; that ancestor's own writes are included). Each
// channel stops independently; the target's own writes are never included.
// Writes come oldest first, within a checkpoint by (task ID, index).
// HasSeed is false only when the chain really ends (a root, or a parent
// deleted by DeleteForRuns or Prune) before a seed, or returns to a
// checkpoint it has walked (a cycle, made by putting again the ID of a
// deleted checkpoint, is walked once, as memsaver walks it).
//
// The walk visits at most deltaBudget ancestors per script call, fewer
// when they are large (10,000 checkpoint fields read, 4,000 writes or 2 MiB
// of writes collected end a call), so a chain
// of n small ancestors takes n/deltaBudget+1 round trips. No channels gives an
// empty map without calling Redis. Errors: checkpoint.ErrNotFound when the
// target does not exist; checkpoint.ErrDataLoss when an ancestor its
// namespace index names, a value, or the thread's head is missing, when a
// cycle is not closed within one call (which then cannot tell where it
// closed), or when the thread is deleted or replaced during the walk, or an
// ancestor the walk was to continue from is deleted meanwhile (a Prune or
// DeleteForRuns: the history would be cut short);
// checkpoint.ErrInvalidConfig for a bad thread or namespace.
func (s *Saver) DeltaChannelHistory(ctx context.Context, cfg checkpoint.Config, channels []string) (_ map[string]checkpoint.DeltaHistory, err error) {
	ctx, call := s.begin(ctx, opDeltaChannelHistory)
	defer func() { call.end(err) }()
	call.address(cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
	call.set(attrChannels.Int(len(channels)))
	out := make(map[string]checkpoint.DeltaHistory, len(channels))
	if len(channels) == 0 {
		return out, nil
	}
	if err := validateAddress(cfg); err != nil {
		return nil, err
	}
	if cfg.CheckpointID != "" && keys.ValidateID(cfg.CheckpointID) != nil {
		return nil, notFound("checkpoint %q", cfg.CheckpointID)
	}
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	shard := s.layout.Shard(th)
	open := slices.Clone(channels)
	slices.Sort(open)
	open = slices.Compact(open)
	// Per channel: the seed, and its lists of writes (one per script call,
	// in call order: nearest the target first).
	type acc struct {
		seed any
		has  bool
		segs [][]any
	}
	accs := make(map[string]*acc, len(open))
	for _, ch := range open {
		accs[ch] = &acc{}
	}
	target, gen, cursor := cfg.CheckpointID, "", ""
	seen := map[string]bool{}
	// With encryption on, the script answers the places of the values
	// (a seed's version, the checkpoint of each group of writes): their AAD.
	places := "0"
	if s.opts.Encryption != nil {
		places = "1"
	}
	for {
		args := make([]any, 0, 8+len(open))
		args = append(args, s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), target, cursor, gen, deltaBudget, places)
		for _, ch := range open {
			args = append(args, ch)
		}
		res, err := s.run(ctx, scriptrun.DeltaHistory, []string{s.layout.Head(th), s.layout.Threads(shard)}, args...).Slice()
		if errors.Is(err, redis.Nil) {
			return nil, notFound("checkpoint %q of thread %q", cfg.CheckpointID, th)
		}
		if redis.HasErrorPrefix(err, "CHANGED") {
			return nil, dataLoss("delta channel history: the thread was deleted or replaced, or a checkpoint of the walk deleted, during the walk (%v)", err)
		}
		if err != nil {
			return nil, scriptErr("delta channel history", err)
		}
		if len(res) != 3+len(open) {
			return nil, corrupt("delta history reply of %d entries for %d channels", len(res), len(open))
		}
		id, ok1 := res[0].(string)
		g, ok2 := res[1].(string)
		next, ok3 := res[2].(string)
		if !ok1 || !ok2 || !ok3 {
			return nil, corrupt("delta history reply head %v", res[:3])
		}
		target, gen = id, g
		still := open[:0:0]
		for i, ch := range open {
			parts, ok := res[3+i].([]any)
			if !ok || len(parts) == 0 {
				return nil, corrupt("delta history entry of %T", res[3+i])
			}
			a := accs[ch]
			if len(parts) > 1 {
				a.segs = append(a.segs, parts[1:])
			}
			switch seed := parts[0].(type) {
			case nil:
				still = append(still, ch)
			case string:
				v, err := s.decodeValue(ctx, channelPlace(th, ns, ch, ""), seed)
				if err != nil {
					return nil, err
				}
				a.seed, a.has = v, true
			case []any: // places: {value, version}
				val, ok1 := seed[0].(string)
				ver, ok2 := seed[len(seed)-1].(string)
				if len(seed) != 2 || !ok1 || !ok2 {
					return nil, corrupt("delta history seed of %d entries", len(seed))
				}
				v, err := s.decodeValue(ctx, channelPlace(th, ns, ch, ver), val)
				if err != nil {
					return nil, err
				}
				a.seed, a.has = v, true
			default:
				return nil, corrupt("delta history seed of %T", parts[0])
			}
		}
		if next == "" || len(still) == 0 {
			break
		}
		if seen[next] {
			return nil, dataLoss("delta channel history: the parent chain cycles through %q", next)
		}
		seen[next] = true
		open, cursor = still, next
	}
	for _, ch := range channels {
		a := accs[ch]
		h, err := s.decodeHistory(ctx, th, ns, places == "1", a.seed, a.has, a.segs)
		if err != nil {
			return nil, err
		}
		out[ch] = h
	}
	return out, nil
}

// decodeHistory decodes the lists of writes of one channel (one per script
// call, in call order; each: per checkpoint nearest the target first, its
// count n, with places its checkpoint's id, and n field/value pairs) into
// its history, oldest write first.
func (s *Saver) decodeHistory(ctx context.Context, th, ns string, places bool, seed any, hasSeed bool, segs [][]any) (checkpoint.DeltaHistory, error) {
	h := checkpoint.DeltaHistory{Seed: seed, HasSeed: hasSeed}
	// Where each checkpoint's writes are, nearest the target first.
	type group struct {
		seg, at, n int
		id         string // with places
	}
	head := 1 // the entries before a group's writes: n, and with places the id
	if places {
		head = 2
	}
	var groups []group
	total := 0
	for si, seg := range segs {
		for i := 0; i < len(seg); {
			n, ok := seg[i].(int64)
			if !ok || n < 1 || n > int64(len(seg)-i-head)/2 {
				return h, corrupt("delta history writes: count %v at %d of %d entries", seg[i], i, len(seg))
			}
			g := group{seg: si, at: i + head, n: int(n)}
			if places {
				if g.id, ok = seg[i+1].(string); !ok {
					return h, corrupt("delta history writes: checkpoint of %T", seg[i+1])
				}
			}
			groups = append(groups, g)
			total += int(n)
			i += head + 2*int(n)
		}
	}
	if total == 0 {
		return h, nil
	}
	h.Writes = make([]checkpoint.PendingWrite, 0, total)
	var ws []storedWrite // one checkpoint's writes, reused
	for gi := len(groups) - 1; gi >= 0; gi-- {
		g := groups[gi]
		pairs := segs[g.seg][g.at : g.at+2*g.n]
		ws = ws[:0]
		for i := 0; i < len(pairs); i += 2 {
			f, ok1 := pairs[i].(string)
			v, ok2 := pairs[i+1].(string)
			if !ok1 || !ok2 {
				return h, corrupt("delta history write of %T, %T", pairs[i], pairs[i+1])
			}
			w, err := s.decodeWrite(ctx, th, ns, g.id, f, v)
			if err != nil {
				return h, err
			}
			ws = append(ws, w)
		}
		slices.SortFunc(ws, compareWrites)
		for _, w := range ws {
			h.Writes = append(h.Writes, w.PendingWrite)
		}
	}
	return h, nil
}
