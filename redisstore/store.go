package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/meta"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// Store is a long-term memory store on plain Redis. It is safe for
// concurrent use.
type Store struct {
	rdb      redis.UniversalClient
	opts     Options
	fields   []path // parsed Options.Fields
	base     string // "{Prefix}:", the start of every key
	registry string // "{Prefix}:ns"
	tel      *telemetry
}

// New returns a Store that keeps its items in rdb under opts.Prefix. The
// caller owns rdb and closes it once the Store is no longer used. rdb may be
// a *redis.Client, a *redis.ClusterClient, a failover client or a ring of
// one shard; Redis 7.0 or later (or Valkey) without modules. New reads the
// prefix's meta key (one round trip; two for a new prefix, whose meta key
// it writes); it returns an error wrapping ErrInvalidOptions for Options it
// cannot use or a prefix written with another format or Dims, and one
// wrapping checkpoint.ErrDataLoss for a prefix that holds items but lost its
// meta key.
func New(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Store, error) {
	if rdb == nil {
		return nil, errorf(ErrInvalidOptions, "nil Redis client")
	}
	o, fields, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	base := "{" + o.Prefix + "}:"
	registry := base + "ns"
	if err := checkMeta(ctx, rdb, base+"meta", registry, o.Dims); err != nil {
		return nil, err
	}
	return &Store{rdb: rdb, opts: o, fields: fields, base: base, registry: registry, tel: newTelemetry(o, rdb)}, nil
}

// storeFormat is the version of the store's layout (docs/storage-format.md).
const storeFormat = "store-1"

// checkMeta writes the store's meta key when the prefix is new ("format",
// and "dims": the vectors' length) and refuses, with ErrInvalidOptions, a
// prefix written with another format or another number of dimensions. A
// prefix without its meta key whose namespace registry names a namespace
// lost the key (evicted, deleted): it is refused with checkpoint.ErrDataLoss
// and nothing is written, rather than given a new key with whatever Dims
// this store has.
//
// The registry holds the marker member "" from the prefix's creation on
// (meta field "registry" = "marked" says so), so that a registry lost whole
// is told from a store without items: every script refuses a registry
// without its marker (DATALOSS), and so does checkMeta when the meta key
// says the marker was written. A prefix of an earlier version, whose meta
// key lacks the field, gets the marker and the field now.
func checkMeta(ctx context.Context, rdb redis.UniversalClient, key, registry string, dims int) error {
	var all *redis.MapStringStringCmd
	var members *redis.IntCmd
	var marker *redis.FloatCmd
	cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		all = p.HGetAll(ctx, key)
		members = p.ZCard(ctx, registry)
		marker = p.ZScore(ctx, registry, meta.RegistryMarker)
		return nil
	})
	if err := meta.TxErr(cmds, err); err != nil && !errors.Is(err, redis.Nil) {
		return redisErr("meta key "+key, err)
	}
	marked := marker.Err() == nil
	m := all.Val()
	namespaces := members.Val()
	if marked {
		namespaces--
	}
	if len(m) == 0 && namespaces > 0 {
		return fmt.Errorf("%w: redisstore: prefix has no meta key %s, but its namespace registry %s names namespaces: the meta key was lost "+
			"(evicted or deleted); write it back (HSET %s format %s dims <the store's Dims> registry %s) instead of opening a store on the prefix",
			checkpoint.ErrDataLoss, key, registry, key, storeFormat, registryMarked)
	}
	if len(m) > 0 && m["format"] == storeFormat && m[fieldRegistry] == registryMarked && !marked {
		return fmt.Errorf("%w: redisstore: the namespace registry %s lacks its marker member: it was lost (evicted or deleted)",
			checkpoint.ErrDataLoss, registry)
	}
	if len(m) == 0 || m[fieldRegistry] == "" {
		// A new prefix, or one of an earlier version: the meta key (its
		// missing fields) and the registry's marker, at once.
		cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSetNX(ctx, key, "format", storeFormat)
			p.HSetNX(ctx, key, "dims", dims)
			p.HSetNX(ctx, key, fieldRegistry, registryMarked)
			p.ZAddNX(ctx, registry, redis.Z{Score: 0, Member: meta.RegistryMarker})
			all = p.HGetAll(ctx, key)
			return nil
		})
		if err := meta.TxErr(cmds, err); err != nil {
			return redisErr("meta key "+key, err)
		}
		m = all.Val()
	}
	if m["format"] != storeFormat {
		return errorf(ErrInvalidOptions, "prefix holds store format %q (meta key %s); this version reads %q", m["format"], key, storeFormat)
	}
	if m["dims"] != strconv.Itoa(dims) {
		return errorf(ErrInvalidOptions, "prefix was written with %s dimensions (meta key %s), not %d", m["dims"], key, dims)
	}
	return nil
}

// fieldRegistry is the meta key's field that says the registry holds its
// marker member; registryMarked is its value.
const (
	fieldRegistry  = "registry"
	registryMarked = "marked"
)

// Options returns the options of the store, defaults filled in.
func (s *Store) Options() Options {
	o := s.opts
	o.Fields = append([]string(nil), o.Fields...)
	return o
}

// LoadScripts loads the store's scripts into Redis (on a Cluster, into the
// node the store's slot lives on), so that the first call of each operation
// is one round trip. Calling it is optional: a script missing from Redis's
// cache is sent again transparently, at the cost of one more round trip.
func (s *Store) LoadScripts(ctx context.Context) (err error) {
	ctx, call := s.begin(ctx, opLoadScripts)
	defer func() { call.end(err) }()
	for _, sc := range storeScripts {
		sent(ctx)
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return redisErr("load scripts", err)
		}
	}
	return nil
}

var storeScripts = []*redis.Script{scriptrun.StoreWrite, scriptrun.StoreGet, scriptrun.StoreScan, scriptrun.StoreList}

// run runs a script on the store's slot: EVALSHA, then EVAL when Redis does
// not have it cached.
func (s *Store) run(ctx context.Context, sc *redis.Script, args []any) *redis.Cmd {
	sent(ctx)
	return scriptrun.Run(ctx, s.rdb, sc, []string{s.registry}, args...)
}
