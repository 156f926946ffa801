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
	remember            bool // a listed checkpoint a GetTuple of it by id may predict (modes ns and thread)
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
}

// readValues reads the values a script left out of its reply (list.lua with
// ARGV[10] "2", get_tuple.lua with ARGV[8] "1": values of over 32 KiB) by
// plain HMGET of their values hashes, one per namespace, each value once, in
// one round trip: values then never enter Lua (docs/storage-format.md,
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
		for j := 0; j < len(pairs); j += 2 {
			f, _ := pairs[j].(string)
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
	}
	// A hash with no value to read (its checkpoints name no channel) is not
	// read: HMGET needs a field.
	reads = slices.DeleteFunc(reads, func(r *valuesRead) bool { return len(r.fields) == 0 })
	if len(reads) > 0 {
		if err := s.sendValueReads(ctx, reads); err != nil {
			return redisErr(op, err)
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

// sendValueReads sends the HMGETs: the only one alone, several in one
// pipeline (each reads a hash of its own; no transaction is needed, as every
// value is checked for).
func (s *Saver) sendValueReads(ctx context.Context, reads []*valuesRead) error {
	if len(reads) == 1 {
		r := reads[0]
		r.cmd = s.rdb.HMGet(ctx, r.key, r.fields...)
		return r.cmd.Err()
	}
	pipe := s.rdb.Pipeline()
	for _, r := range reads {
		r.cmd = pipe.HMGet(ctx, r.key, r.fields...)
	}
	_, err := pipe.Exec(ctx)
	return err
}
