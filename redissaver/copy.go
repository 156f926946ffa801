package redissaver

import (
	"context"
	"strings"

	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
	"github.com/redis/go-redis/v9"
)

// CopyThread copies every checkpoint of the source thread, in every
// namespace, with its ID, parent link, metadata, pending writes and channel
// values, to the target thread, which must have no checkpoints: copying onto
// a thread that has some is an error wrapping checkpoint.ErrInvalidConfig,
// and changes nothing. The source is unchanged; copying a thread that does
// not exist is a no-op.
//
// Two round trips: one script reads the source as one consistent snapshot,
// one script writes the target atomically (the two threads may live in
// different shards, so they cannot share a script on a Cluster). The whole
// thread travels through the client in between, so copying a very large
// thread needs memory in proportion to it.
func (s *Saver) CopyThread(ctx context.Context, sourceThreadID, targetThreadID string) error {
	for _, th := range []string{sourceThreadID, targetThreadID} {
		if err := keys.ValidateThreadID(th); err != nil {
			return invalidConfig("%v", err)
		}
	}
	if sourceThreadID == targetThreadID {
		return invalidConfig("cannot copy thread %q onto itself", sourceThreadID)
	}
	srcShard := s.layout.Shard(sourceThreadID)
	dump, err := s.run(ctx, scripts.DumpThread, []string{s.layout.Head(sourceThreadID), s.layout.Threads(srcShard)},
		s.layout.ShardBase(srcShard), keys.Encode(sourceThreadID)).Slice()
	if err != nil {
		return scriptErr("copy thread: read source", err)
	}
	shard := s.layout.Shard(targetThreadID)
	args := []any{s.layout.ShardBase(shard), keys.Encode(targetThreadID), s.opts.ttlMillis(), keys.NewGen()}
	args = append(args, s.eventSpec(evType, "thread_copied", evThread, keys.Encode(targetThreadID), evSourceTh, keys.Encode(sourceThreadID))...)
	count := 0
	for _, entry := range dump {
		parts, ok := entry.([]any)
		if !ok || len(parts) < 2 {
			return corrupt("thread dump entry of %T", entry)
		}
		if len(parts) == 2 {
			continue // a namespace whose checkpoints all expired
		}
		blobs, _ := parts[1].([]any)
		args = append(args, "ns", parts[0], len(blobs)/2)
		args = append(args, blobs...)
		for _, c := range parts[2:] {
			cp, ok := c.([]any)
			if !ok || len(cp) != 2 {
				return corrupt("thread dump checkpoint of %T", c)
			}
			flat, _ := cp[1].([]any)
			if len(flat)%2 != 0 {
				return corrupt("thread dump checkpoint hash")
			}
			args = append(args, "cp", cp[0], len(flat)/2)
			for i := 0; i < len(flat); i += 2 {
				v := flat[i+1]
				if flat[i] == fieldRunKey {
					v = s.rehomeRunKey(v, shard)
				}
				args = append(args, flat[i], v)
			}
			count++
		}
	}
	if count == 0 {
		return nil
	}
	keyList := []string{s.layout.Head(targetThreadID), s.layout.Threads(shard), s.layout.All(shard),
		s.layout.Events(targetThreadID), s.layout.Feed(shard)}
	err = s.run(ctx, scripts.Restore, keyList, args...).Err()
	if redis.HasErrorPrefix(err, "EXISTS") {
		return invalidConfig("target thread %q already has checkpoints", targetThreadID)
	}
	if err != nil {
		return scriptErr("copy thread: write target", err)
	}
	return nil
}

// rehomeRunKey moves a run index key to another shard: the run stays, the
// shard changes.
func (s *Saver) rehomeRunKey(v any, shard int) any {
	key, _ := v.(string)
	_, encRun, ok := strings.Cut(key, "}:run:")
	if !ok {
		return v
	}
	return s.layout.ShardBase(shard) + "run:" + encRun
}
