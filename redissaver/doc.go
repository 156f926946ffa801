// Package redissaver is a checkpoint.Saver on plain Redis 7 (or Valkey), with
// no modules: checkpoints, their channel values and their pending writes in
// hashes and lex-ordered sorted sets, every write one atomic Lua script and
// one round trip, every read one round trip.
//
// # Use
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	defer rdb.Close() // the caller owns the client
//	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: "myapp"})
//
// *Saver implements checkpoint.Saver and every optional capability:
// checkpoint.RunDeleter, checkpoint.ThreadCopier, checkpoint.Pruner and
// checkpoint.DeltaHistorian.
//
// # Storage
//
// Each checkpoint is one hash holding its header, its channel versions, one
// canonical JSON field per metadata key and its pending writes. Channel
// values live in one hash per (thread, namespace), one field per (channel,
// version): Put writes only the channels of newVersions, so an unchanged
// value is never written twice, and GetTuple reads the values its versions
// point to. Sorted sets whose members all score 0 order checkpoint IDs by
// their bytes: the latest checkpoint is one reverse range, Before one lex
// range, a checkpoint by ID one hash read. Package keys documents every key.
//
// # Guarantees
//
//   - Put, PutWrites and DeleteThread are each one atomic script and one
//     round trip; GetTuple is one script call; List is one call per page,
//     with the metadata filter evaluated inside Redis (two pipelined round
//     trips per page when listing every thread of a saver with several
//     shards).
//   - No KEYS or SCAN: a per-shard thread registry and checkpoint index
//     serve the listings that span threads.
//   - Every key of a thread carries its shard's hash tag, so every script
//     touches one slot and runs on Redis Cluster.
//   - Caller strings (thread IDs, namespaces) are escaped into keys; no
//     thread ID or namespace can reach another thread's keys or break the
//     hash tag. Checkpoint IDs are limited to printable ASCII without
//     % : { } * ? [ ] \ (uuid, ULID and the like) and sort by their bytes.
//   - With Options.TTL, the keys of a thread expire TTL after its last write.
//
// # Errors
//
// Errors wrap the sentinels of package checkpoint (ErrNotFound,
// ErrInvalidConfig, ErrInvalidCheckpoint, ErrSerialization) or the Redis
// error, and are matched with errors.Is. Bad input is refused before
// anything is written.
package redissaver
