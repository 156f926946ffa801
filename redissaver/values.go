package redissaver

import (
	"context"
	"errors"
	"slices"
	"strings"

	mb "github.com/graphstate/redcheck/internal/member"
	"github.com/redis/go-redis/v9"
)

// cpReply is one checkpoint as a script returned it (list.lua, get_tuple.lua):
// where it lives, its hash, its values (nil when the script left them out of
// Lua, for readValues) and its parent's writes.
type cpReply struct {
	id, thread, ns, gen string
	flat, values, extra any
}

// errValueGone reports that a value a checkpoint points to was missing when
// readValues read it: deleted since the script read the checkpoint (a Prune,
// a deletion, a re-put) or lost. Either way the script reads the checkpoint
// again with its values, and answers for it (ErrDataLoss when lost).
var errValueGone = errors.New("redissaver: a value left out of the script is gone")

// valuesRead is the HMGET of one values hash: each blob field once, however
// many of the checkpoints read point to it.
type valuesRead struct {
	key    string
	fields []string
	at     map[string]int // blob field -> its index in fields
	cmd    *redis.SliceCmd
	// The checkpoints whose values it reads, with the call token ("o") the
	// script read of each: read right after the HMGET, a token unchanged
	// tells that the checkpoint still pointed to those values, which no
	// reclaim then deletes, nor any Put replaces.
	cps, tokens []string
	oks         []*redis.StringCmd
}

// readValues reads the values a script left out of its reply (list.lua with
// ARGV[10] "2", get_tuple.lua with ARGV[8] "1": values of over 32 KiB) by
// plain HMGET of their values hashes, one per namespace, each value once, in
// one round trip, each followed by the call token of every checkpoint it
// reads the values of (one changed or gone is errValueGone):
// values then never enter Lua (docs/storage-format.md,
// "Values out of Lua"). It sets every such reply's values, aligned with the
// "c:" fields of its hash. A value missing is errValueGone; an error of
// Redis is wrapped with op. Replies that hold their values are left alone;
// with none to read, no round trip is made.
func (s *Saver) readValues(ctx context.Context, op string, items []cpReply) error {
	var reads []*valuesRead
	byKey := map[string]*valuesRead{}
	refs := make([][]int, len(items)) // per item: its values' indexes in its read's fields
	which := make([]*valuesRead, len(items))
	for i := range items {
		it := &items[i]
		if it.values != nil {
			continue
		}
		pairs, ok := it.flat.([]any)
		if !ok || len(pairs)%2 != 0 {
			return corrupt("checkpoint %q: hash reply of %T", it.id, it.flat)
		}
		key := s.layout.Blobs(it.thread, it.gen, it.ns)
		r := byKey[key]
		if r == nil {
			r = &valuesRead{key: key, at: map[string]int{}}
			byKey[key] = r
			reads = append(reads, r)
		}
		which[i] = r
		refs[i] = make([]int, 0, len(pairs)/2)
		token := ""
		for j := 0; j < len(pairs); j += 2 {
			f, _ := pairs[j].(string)
			if f == fieldToken {
				token, _ = pairs[j+1].(string)
			}
			if !strings.HasPrefix(f, prefixChannel) {
				continue
			}
			v, ok := pairs[j+1].(string)
			if !ok {
				return corrupt("checkpoint %q: field %q of %T", it.id, f, pairs[j+1])
			}
			blob := mb.Blob(f[len(prefixChannel):], v)
			k, seen := r.at[blob]
			if !seen {
				k = len(r.fields)
				r.at[blob] = k
				r.fields = append(r.fields, blob)
			}
			refs[i] = append(refs[i], k)
		}
		r.cps = append(r.cps, s.layout.Checkpoint(it.thread, it.gen, it.ns, it.id))
		r.tokens = append(r.tokens, token)
	}
	// A hash with no value to read (its checkpoints name no channel) is not
	// read: HMGET needs a field.
	reads = slices.DeleteFunc(reads, func(r *valuesRead) bool { return len(r.fields) == 0 })
	if len(reads) > 0 {
		if err := s.sendValueReads(ctx, reads); err != nil {
			return redisErr(op, err)
		}
	}
	for _, r := range reads {
		for k, ok := range r.oks {
			// A checkpoint deleted or put again since the script read it:
			// its values may have been deleted, and their fields written
			// again (another value, the empty marker) by later Puts.
			if errors.Is(ok.Err(), redis.Nil) || ok.Val() != r.tokens[k] {
				return errValueGone
			}
		}
	}
	for i := range items {
		r := which[i]
		if r == nil {
			continue
		}
		if len(r.fields) == 0 {
			items[i].values = []any{}
			continue
		}
		got := r.cmd.Val()
		if len(got) != len(r.fields) {
			return corrupt("%s: %d values read for %d asked", op, len(got), len(r.fields))
		}
		vals := make([]any, len(refs[i]))
		for k, j := range refs[i] {
			if got[j] == nil {
				return errValueGone
			}
			vals[k] = got[j]
		}
		items[i].values = vals
	}
	return nil
}

// sendValueReads sends the HMGETs, each followed by the HGET of the token of
// every checkpoint whose values it reads, all in one pipeline: one round
// trip, and on one connection in that order (the keys of a values hash and
// of its checkpoints share a hash tag, so a Cluster sends them to one
// node). A token unchanged after the HMGET names the checkpoint the script
// read, whose values the HMGET read: only the same Put call, sent again,
// puts a checkpoint with the same token, and with the same values. (No
// transaction: the reads of a page span several hash tags, and a
// transaction per values hash is not one pipeline in go-redis.)
func (s *Saver) sendValueReads(ctx context.Context, reads []*valuesRead) error {
	sent(ctx, 0)
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, r := range reads {
			r.cmd = pipe.HMGet(ctx, r.key, r.fields...)
			r.oks = make([]*redis.StringCmd, len(r.cps))
			for k, cp := range r.cps {
				r.oks[k] = pipe.HGet(ctx, cp, fieldToken)
			}
		}
		return nil
	})
	n := counted(ctx)
	for _, r := range reads {
		n.args(nil, r.cmd.Args()[1:])
		n.reply(r.cmd.Val())
		for _, ok := range r.oks {
			n.args(nil, ok.Args()[1:])
			n.reply(ok.Val())
		}
	}
	if !errors.Is(err, redis.Nil) {
		return err
	}
	// A checkpoint gone answers nil, which the tokens tell; any other error
	// is the call's.
	for _, r := range reads {
		if err := r.cmd.Err(); err != nil {
			return err
		}
		for _, ok := range r.oks {
			if err := ok.Err(); err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
		}
	}
	return nil
}
