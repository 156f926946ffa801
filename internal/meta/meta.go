// Package meta reads and writes a prefix's meta key, the one record of the
// storage format version and the shard count that every package of
// redcheck (saver, stream, CLI) checks before it touches a prefix.
package meta

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/redis/go-redis/v9"
)

// Meta hash fields.
const (
	FieldFormat = "format"
	FieldShards = "shards"
)

// Ensure checks the meta key of layout's prefix against the layout: the
// storage format must be keys.FormatVersion and the shard count the
// layout's. With create, a missing meta key makes a new prefix (the shard
// registries' markers, then the meta key), unless NoThreads finds that the
// prefix was written and lost its meta key (evicted, deleted): an error
// wrapping checkpoint.ErrDataLoss, and nothing is written (a new meta key
// would let a saver of any shard count take the prefix). Without
// create, a missing key is accepted (nothing was written yet). A mismatch
// is an error wrapping checkpoint.ErrInvalidConfig that names both values.
func Ensure(ctx context.Context, rdb redis.UniversalClient, l keys.Layout, create bool) error {
	key := l.Meta()
	got, err := rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return fmt.Errorf("redcheck: meta key %s: %w", key, err)
	}
	if len(got) == 0 {
		if !create {
			return nil
		}
		if err := NoThreads(ctx, rdb, l); err != nil {
			return err
		}
		if got, err = createPrefix(ctx, rdb, l); err != nil {
			return err
		}
	}
	return compare(key, got, l)
}

// RegistryMarker is the member every shard registry holds from the creation
// of its prefix on (no thread ID encodes to ""): a registry without it was
// lost whole, and the threads it listed cannot be told from new ones.
const RegistryMarker = ""

// NoThreads returns an error wrapping checkpoint.ErrDataLoss when a prefix
// without its meta key was written: a shard registry lists a thread (a
// member but the marker), or the registry of shard l.Shards() exists (the
// prefix was created with more shards than l's, and its threads may sit in
// registries l does not read). Registries that hold only their markers are
// a creation that stopped before the meta key; it may be completed. One
// round trip, a member or two read per shard.
func NoThreads(ctx context.Context, rdb redis.UniversalClient, l keys.Layout) error {
	pipe := rdb.Pipeline()
	firsts := make([]*redis.StringSliceCmd, l.Shards()+1)
	for n := range firsts {
		firsts[n] = pipe.ZRange(ctx, l.Threads(n), 0, 1)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redcheck: shard registries of %q: %w", l.Prefix(), err)
	}
	for n, c := range firsts {
		for _, m := range c.Val() {
			if m != RegistryMarker || n == l.Shards() {
				return fmt.Errorf("%w: prefix %q has no meta key %s, but its shard registry %s exists and is not empty: the prefix was written "+
					"and its meta key lost (evicted or deleted); write it back (HSET %s %s %d %s <the prefix's shard count>, docs/storage-format.md) "+
					"instead of starting a saver on the prefix", checkpoint.ErrDataLoss, l.Prefix(), l.Meta(), l.Threads(n), l.Meta(), FieldFormat, keys.FormatVersion, FieldShards)
			}
		}
	}
	return nil
}

// createPrefix writes a new prefix: first the marker of every shard
// registry, then the meta key (so a prefix whose meta key exists has every
// marker). It returns the meta key's fields.
func createPrefix(ctx context.Context, rdb redis.UniversalClient, l keys.Layout) (map[string]string, error) {
	pipe := rdb.Pipeline()
	for n := 0; n < l.Shards(); n++ {
		pipe.ZAddNX(ctx, l.Threads(n), redis.Z{Score: 0, Member: RegistryMarker})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redcheck: shard registries of %q: %w", l.Prefix(), err)
	}
	key := l.Meta()
	got, err := SetOnce(ctx, rdb, key, FieldFormat, keys.FormatVersion, FieldShards, l.Shards())
	if err != nil {
		return nil, fmt.Errorf("redcheck: meta key %s: %w", key, err)
	}
	return got, nil
}

// SetOnce writes the fields of a meta hash that it lacks (HSETNX, field and
// value pairs) and returns all its fields, in one MULTI: what a writer of a
// prefix that may be new does. A refused command (NOPERM, say) is returned
// rather than the EXECABORT it causes.
func SetOnce(ctx context.Context, rdb redis.UniversalClient, key string, pairs ...any) (map[string]string, error) {
	var all *redis.MapStringStringCmd
	cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i+1 < len(pairs); i += 2 {
			p.HSetNX(ctx, key, fmt.Sprint(pairs[i]), pairs[i+1])
		}
		all = p.HGetAll(ctx, key)
		return nil
	})
	if err := TxErr(cmds, err); err != nil {
		return nil, err
	}
	return all.Val(), nil
}

// TxErr is the error of a MULTI's commands and its EXEC (err): a command's
// own error (NOPERM, say) rather than the EXECABORT it caused, else err.
func TxErr(cmds []redis.Cmder, err error) error {
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && !redis.HasErrorPrefix(cerr, "EXECABORT") {
			return cerr
		}
	}
	return err
}

func compare(key string, got map[string]string, l keys.Layout) error {
	if f := got[FieldFormat]; f != strconv.Itoa(keys.FormatVersion) {
		return fmt.Errorf("%w: prefix %q holds storage format %q (meta key %s); this version reads format %d",
			checkpoint.ErrInvalidConfig, l.Prefix(), f, key, keys.FormatVersion)
	}
	if s := got[FieldShards]; s != strconv.Itoa(l.Shards()) {
		return fmt.Errorf("%w: prefix %q was written with %s shards (meta key %s), not %d: set Shards to %s",
			checkpoint.ErrInvalidConfig, l.Prefix(), s, key, l.Shards(), s)
	}
	return nil
}

// ErrEvictionUnknown is wrapped by EvictionPolicy when neither INFO nor
// CONFIG GET tells the server's eviction policy.
var ErrEvictionUnknown = errors.New("redcheck: the server's eviction policy cannot be read")

// EvictionPolicy returns the server's maxmemory policy and whether it can
// evict keys that have no TTL (an "allkeys-*" policy with a memory limit
// set). It reads INFO memory, which works where CONFIG is disabled (several
// managed services), and falls back to CONFIG GET.
func EvictionPolicy(ctx context.Context, rdb redis.UniversalClient) (policy string, evicts bool, err error) {
	var maxmemory string
	if info, ierr := rdb.Info(ctx, "memory").Result(); ierr == nil {
		for _, line := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			switch k {
			case "maxmemory_policy":
				policy = v
			case "maxmemory":
				maxmemory = v
			}
		}
	}
	if policy == "" {
		cfg, cerr := rdb.ConfigGet(ctx, "maxmemory*").Result()
		if cerr != nil {
			return "", false, fmt.Errorf("%w: INFO memory has no maxmemory_policy and CONFIG GET failed: %v", ErrEvictionUnknown, cerr)
		}
		policy, maxmemory = cfg["maxmemory-policy"], cfg["maxmemory"]
		if policy == "" {
			return "", false, fmt.Errorf("%w: neither INFO memory nor CONFIG GET names it", ErrEvictionUnknown)
		}
	}
	limited := maxmemory != "" && maxmemory != "0"
	return policy, limited && strings.HasPrefix(policy, "allkeys-"), nil
}

// Emptied reports whether the prefix of l holds none of the keys a written
// prefix always has: its meta key, its shard registries and its shards'
// indexes of every checkpoint (Redis restarted without persistence,
// FLUSHALL, a failover to an empty replica). One round trip; a single-key
// EXISTS each, so that it works on a Cluster.
func Emptied(ctx context.Context, rdb redis.UniversalClient, l keys.Layout) (bool, error) {
	pipe := rdb.Pipeline()
	cmds := []*redis.IntCmd{pipe.Exists(ctx, l.Meta())}
	for n := range l.Shards() {
		cmds = append(cmds, pipe.Exists(ctx, l.Threads(n)), pipe.Exists(ctx, l.All(n)))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("redcheck: keys of prefix %q: %w", l.Prefix(), err)
	}
	for _, c := range cmds {
		if c.Val() != 0 {
			return false, nil
		}
	}
	return true, nil
}
