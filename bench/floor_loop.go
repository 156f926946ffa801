package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/redis/go-redis/v9"
)

// The loop's floor checkpointers.
const (
	loopFloor       = "redis-floor"
	loopFloorScript = "redis-floor-script"
)

// floorScript only stores its arguments: redis-floor-script's command.
var floorScript = redis.NewScript("return redis.call('HSET', KEYS[1], unpack(ARGV))")

// floorSaver is the loop's redis-floor checkpointer: the least any
// checkpointer that keeps the loop's state in Redis pays per super-step.
// Each call the loop makes is one plain command in one round trip, awaited:
// GetTuple an HGET, PutWrites an HSET of the writes' values (JSON), Put an
// HSET of the checkpoint with its metadata and the values of its new
// versions (JSON): no script, no check, no index, no event, nothing read
// back. redcheck makes the same calls with every guarantee; the floor's
// Redis CPU, round trips and added time bound from below what any Redis
// checkpointer of this loop reaches on the same machine and client. With
// script (redis-floor-script), each HSET is instead an EVALSHA of a script
// that only HSETs its arguments: the least a checkpointer pays that checks
// before it writes, atomically and in one round trip, which on Redis takes a
// script (whose arguments all enter Lua).
type floorSaver struct {
	c      redis.UniversalClient
	prefix string
	script bool
}

func (f floorSaver) hset(ctx context.Context, key string, pairs ...any) error {
	if f.script {
		return floorScript.Run(ctx, f.c, []string{key}, pairs...).Err()
	}
	return f.c.HSet(ctx, key, pairs...).Err()
}

func (f floorSaver) key(thread string) string { return f.prefix + ":{" + thread + "}" }

func (f floorSaver) GetTuple(ctx context.Context, cfg checkpoint.Config) (*checkpoint.Tuple, error) {
	if err := f.c.HGet(ctx, f.key(cfg.ThreadID), "latest").Err(); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	return nil, checkpoint.ErrNotFound
}

func (f floorSaver) PutWrites(ctx context.Context, cfg checkpoint.Config, writes []checkpoint.Write, taskID, _ string) error {
	args := make([]any, 0, 2*len(writes))
	for i, w := range writes {
		b, err := json.Marshal(w.Value)
		if err != nil {
			return err
		}
		args = append(args, cfg.CheckpointID+":"+taskID+":"+strconv.Itoa(i), b)
	}
	return f.hset(ctx, f.key(cfg.ThreadID), args...)
}

func (f floorSaver) Put(ctx context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string) (checkpoint.Config, error) {
	values := make(map[string]any, len(newVersions))
	for ch := range newVersions {
		values[ch] = cp.ChannelValues[ch]
	}
	rec := cp
	rec.ChannelValues = nil
	b, err := json.Marshal(struct {
		Checkpoint checkpoint.Checkpoint
		Metadata   checkpoint.Metadata
		Values     map[string]any
	}{rec, md, values})
	if err != nil {
		return cfg, err
	}
	if err := f.hset(ctx, f.key(cfg.ThreadID), cp.ID, b); err != nil {
		return cfg, err
	}
	return cfg.WithID(cp.ID), nil
}
