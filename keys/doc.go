// Package keys is the Redis key layout of redcheck: pure functions from a
// prefix, a thread, a namespace and a checkpoint ID to key names.
//
// # Shards and hash tags
//
// Every key carries a hash tag that names a shard: "{N}", where N is
// Layout.Shard(threadID), an FNV-1a hash of the thread ID modulo the number
// of shards. All keys of a thread live in its shard, and so do the shard's
// thread registry, its index of every checkpoint and its run index. Every
// write therefore touches one Redis Cluster slot and runs as one atomic Lua
// script, registry and indexes included.
//
// The trade-off: a shard is the unit of placement on a Cluster, so a few
// shards spread threads over few slots, while every operation that spans all
// threads (List without a thread, DeleteForRuns) visits every shard (in one
// pipelined round trip per node). The default, 16 shards, spreads well over
// clusters of up to a few masters; raise it for larger clusters. The number
// of shards is part of the layout: a prefix must keep the same number for
// its lifetime, or the threads written before the change are not found.
//
// # Keys
//
//	P:{N}:threads                 zset  registry of the shard's threads (encoded ids, score 0)
//	P:{N}:all                     zset  every checkpoint of the shard: id \0 thread \0 ns (score 0)
//	P:{N}:run:R                   set   checkpoints of run R in the shard: id \0 thread \0 ns
//	P:{N}:feed                    stream the events of every thread of the shard
//	P:{N}:t:T:ns                  set   the thread's namespaces (encoded)
//	P:{N}:t:T:idx                 zset  every checkpoint of the thread: id \0 ns (score 0)
//	P:{N}:t:T:events              stream the thread's events
//	P:{N}:t:T:n:NS:idx            zset  checkpoint ids of (thread, ns), score 0, so lex order
//	P:{N}:t:T:n:NS:blobs          hash  channel values: len(channel) ":" channel version -> value
//	P:{N}:t:T:n:NS:cp:ID          hash  one checkpoint: header, channel versions, metadata, writes
//
// P is the prefix (no '{' or '}'), T, NS and R are Encode of the thread ID,
// namespace and run ID, ID is the checkpoint ID as given (ValidateID limits
// it to characters that need no encoding). Encode escapes every byte outside
// a safe set as %XX, ':' included, so components never run into each other
// and the layout is injective: ParseCheckpointKey recovers the parts.
//
// The Lua scripts in package scripts build checkpoint keys from the
// namespace base (NamespaceBase) and the thread base (ThreadBase) with the
// same suffixes; keep both in sync.
package keys
