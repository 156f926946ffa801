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
// docs/storage-format.md is the one description of the layout (storage
// format 2), and testdata/format/keys.json its test vectors; this package
// builds those keys:
//
//	P:meta                        hash  format and shard count (Meta)
//	P:{N}:threads                 zset  registry: encoded thread -> lease deadline (ms, 0 none); marker ""
//	P:{N}:all                     zset  every checkpoint of the shard: Member values (score 0)
//	P:{N}:run:R                   set   checkpoints of run R: Member values
//	P:{N}:gc                      zset  generations to reclaim: T \0 G -> due time (ms)
//	P:{N}:feed                    stream the events of every thread of the shard
//	P:{N}:t:T                     hash  the thread's head: g (generation), exp (lease deadline)
//	P:{N}:t:T:events              stream the thread's events
//	P:{N}:t:T:g:G:ns              set   the generation's namespaces (encoded)
//	P:{N}:t:T:g:G:idx             zset  every checkpoint of the generation: id \0 ns (score 0)
//	P:{N}:t:T:g:G:n:NS:idx        zset  checkpoint ids of (thread, ns), score 0, so lex order
//	P:{N}:t:T:g:G:n:NS:blobs      hash  channel values: len(channel) ":" channel version -> value
//	P:{N}:t:T:g:G:n:NS:cp:ID      hash  one checkpoint: header, channel versions, metadata, writes
//
// P is the prefix (no '{' or '}'), T, NS and R are Encode of the thread ID,
// namespace and run ID, ID is the checkpoint ID as given (ValidateID limits
// it to characters that need no encoding), G a generation token (NewGen).
// Encode escapes every byte outside a safe set as %XX, ':' included, so
// components never run into each other and the layout is injective:
// ParseCheckpointKey recovers the parts. The Lua scripts build the same keys
// from the shard base, the encoded thread and the generation they read from
// the head; the vectors check both.
package keys
