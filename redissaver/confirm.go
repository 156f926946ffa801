package redissaver

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/redis/go-redis/v9"
)

// plainRead is a predicted read confirmed by plain commands in one
// MULTI/EXEC, no script (docs/storage-format.md, "Reading a checkpoint"):
// the thread's head, the namespace's set and index, the namespace's newest
// id (a read of the latest), the predicted checkpoint's hash and its values.
// The client judges them with confirmed; anything but the usual case is
// left to get_tuple.lua, which owns the answer for every other state.
type plainRead struct {
	head  *redis.StringSliceCmd     // HMGET head g exp ("" for a field absent)
	exist *redis.IntCmd             // EXISTS of the namespace set and index
	top   *redis.StringSliceCmd     // ZREVRANGE index 0 0, nil for a read by id
	hash  *redis.MapStringStringCmd // HGETALL of the checkpoint's hash
	vals  *redis.Cmd                // HMGET of the values the hint names
}

// readPlain sends the plain reads of a prediction. A Redis error reply in
// any of them (a key of the wrong type) leaves the answer to the script; an
// error of the connection is returned.
func (s *Saver) readPlain(ctx context.Context, thread, ns string, h tupleHint, latest bool) (*plainRead, error) {
	idx := s.layout.Index(thread, h.gen, ns)
	var r plainRead
	pipe := s.rdb.TxPipeline()
	r.head = redis.NewStringSliceCmd(ctx, "hmget", s.layout.Head(thread), keys.HeadGeneration, keys.HeadLease)
	_ = pipe.Process(ctx, r.head) // queued: its error comes with Exec's
	r.exist = pipe.Exists(ctx, s.layout.Namespaces(thread, h.gen), idx)
	if latest {
		r.top = pipe.ZRevRange(ctx, idx, 0, 0)
	}
	r.hash = pipe.HGetAll(ctx, s.layout.Checkpoint(thread, h.gen, ns, h.id))
	r.vals = pipe.Do(ctx, slices.Clone(h.hmget)...) // the hint is shared: go-redis keeps the arguments it is given
	_, err := pipe.Exec(ctx)
	var rerr redis.Error
	if err != nil && !errors.As(err, &rerr) {
		return nil, err
	}
	return &r, nil
}

// confirmed reports whether the plain reads show the predicted checkpoint as
// the answer get_tuple.lua would give: the thread live in the hint's
// generation with no lease (a lease needs Redis's clock, which the script
// reads), the namespace's set and index there, the checkpoint the newest
// of its namespace (a read of the latest), its hash written by the Put of
// the hint's token, of format v 4 or later or without a parent. It returns
// the hash and the values when so.
func (r *plainRead) confirmed(h tupleHint) (map[string]string, []any, bool) {
	head, err := r.head.Result()
	if err != nil || len(head) != 2 || head[0] != h.gen {
		return nil, nil, false
	}
	if exp := head[1]; exp != "" && exp != "0" {
		return nil, nil, false
	}
	if n, err := r.exist.Result(); err != nil || n != 2 {
		return nil, nil, false
	}
	if r.top != nil {
		if top, err := r.top.Result(); err != nil || len(top) != 1 || top[0] != h.id {
			return nil, nil, false
		}
	}
	hash, err := r.hash.Result()
	if err != nil || hash[fieldToken] != h.token {
		return nil, nil, false
	}
	if _, child := hash[fieldParent]; child {
		if v, err := strconv.Atoi(hash[fieldV]); err != nil || v < 4 {
			return nil, nil, false
		}
	}
	vals, err := r.vals.Slice()
	if err != nil {
		return nil, nil, false
	}
	return hash, vals, true
}

// threadGone reports whether the plain reads found no head (a thread
// deleted, or lost, which the script tells apart).
func (r *plainRead) threadGone() bool {
	head, err := r.head.Result()
	return err == nil && len(head) == 2 && head[0] == ""
}

// checkpointGone reports whether the plain reads found the thread in the
// hint's generation and the predicted checkpoint's hash gone: deleted
// (DeleteForRuns, Prune) or lost, which the script tells apart; not
// written over by another writer.
func (r *plainRead) checkpointGone(h tupleHint) bool {
	head, err := r.head.Result()
	if err != nil || len(head) != 2 || head[0] != h.gen {
		return false
	}
	hash, err := r.hash.Result()
	return err == nil && len(hash) == 0
}
