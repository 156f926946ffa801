package redissaver

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/meta"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// Saver is a checkpoint.Saver on plain Redis. It is safe for concurrent use.
type Saver struct {
	rdb    redis.UniversalClient
	opts   Options
	layout keys.Layout
	ser    checkpoint.Serializer
	tel    *telemetry
}

// The interfaces Saver implements; a signature drift fails the build.
var (
	_ checkpoint.Saver          = (*Saver)(nil)
	_ checkpoint.RunDeleter     = (*Saver)(nil)
	_ checkpoint.ThreadCopier   = (*Saver)(nil)
	_ checkpoint.Pruner         = (*Saver)(nil)
	_ checkpoint.DeltaHistorian = (*Saver)(nil)
)

// New returns a Saver that keeps its data in rdb under opts.Prefix. The
// caller owns rdb and closes it after the Saver is no longer used. rdb may be
// a *redis.Client, a *redis.ClusterClient, a failover client or a ring of
// one shard; Redis 7.0 or later (or Valkey) without modules.
//
// New makes two round trips. It writes the prefix's meta key when the
// prefix is new, and refuses (checkpoint.ErrInvalidConfig) a prefix written
// with another storage format or another number of shards. It reads the
// server's eviction policy (INFO memory, else CONFIG GET) and refuses
// (checkpoint.ErrInvalidConfig) a server that may evict the saver's keys (an
// "allkeys-*" policy with a memory limit) or whose policy cannot be read,
// unless Options.AcceptEviction is set.
func New(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Saver, error) {
	if rdb == nil {
		return nil, errors.New("redissaver: nil Redis client")
	}
	o, layout, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if !o.AcceptEviction {
		policy, evicts, err := meta.EvictionPolicy(ctx, rdb)
		switch {
		case err != nil:
			return nil, invalidConfig("%v; set Options.AcceptEviction to accept a server that may evict keys", err)
		case evicts:
			return nil, invalidConfig("the server's maxmemory-policy %q may evict the saver's keys (lost checkpoints surface as checkpoint.ErrDataLoss); "+
				"use noeviction or a volatile-* policy, or set Options.AcceptEviction", policy)
		}
	}
	if err := meta.Ensure(ctx, rdb, layout, true); err != nil {
		return nil, fmt.Errorf("redissaver: %w", err)
	}
	return &Saver{rdb: rdb, opts: o, layout: layout, ser: o.Serializer, tel: newTelemetry(o, rdb)}, nil
}

// The saver's key layout, for this module's tests and tools (keys.Of).
func init() {
	keys.RegisterLayoutOf(func(v any) (keys.Layout, bool) {
		if s, ok := v.(*Saver); ok {
			return s.layout, true
		}
		return keys.Layout{}, false
	})
}

// LoadScripts loads every script into Redis (on a Cluster, into every
// master), so that the first call of each operation is one round trip.
// Calling it is optional: a script missing from Redis's cache is sent again
// transparently.
func (s *Saver) LoadScripts(ctx context.Context) (err error) {
	ctx, call := s.begin(ctx, opLoadScripts)
	defer func() { call.end(err) }()
	for name, sc := range scriptrun.All() {
		sent(ctx, 0)
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return redisErr("load script "+name, err)
		}
	}
	return nil
}

// NextVersion returns the channel version after current; see
// checkpoint.NextVersion.
func (s *Saver) NextVersion(current string) string { return checkpoint.NextVersion(current) }

// run runs a script once (internal/scriptrun). A DATALOSS error of a
// prefix found emptied becomes ErrPrefixReset (recoverEmptied).
func (s *Saver) run(ctx context.Context, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	sent(ctx, 1)
	n := counted(ctx)
	n.args(keys, args)
	cmd := scriptrun.Run(ctx, s.rdb, sc, keys, args...)
	n.reply(cmd.Val())
	if err := cmd.Err(); err != nil {
		if rerr := s.recoverEmptied(ctx, err); rerr != err {
			cmd.SetErr(rerr)
		}
	}
	return cmd
}

// runPipelined runs one script many times in one pipeline
// (internal/scriptrun).
func (s *Saver) runPipelined(ctx context.Context, sc *redis.Script, calls []scriptCall) ([]*redis.Cmd, error) {
	sent(ctx, len(calls))
	n := counted(ctx)
	cs := make([]scriptrun.Call, len(calls))
	for i, c := range calls {
		cs[i] = scriptrun.Call{Keys: c.keys, Args: c.args}
		n.args(c.keys, c.args)
	}
	cmds, err := scriptrun.Pipelined(ctx, s.rdb, sc, cs)
	for _, cmd := range cmds {
		n.reply(cmd.Val())
	}
	return cmds, err
}

type scriptCall struct {
	keys []string
	args []any
}
