// Package redissaver is a checkpoint.Saver on plain Redis 7 (or Valkey), with
// no modules: checkpoints, their channel values and their pending writes in
// hashes and lex-ordered sorted sets, every write one atomic Lua script and
// one round trip, every read one round trip, and no script whose work grows
// with the size of a thread, run, shard or history.
//
// # Use
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	defer rdb.Close() // the caller owns the client
//	saver, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "myapp"})
//
// *Saver implements checkpoint.Saver and every optional capability:
// checkpoint.RunDeleter, checkpoint.ThreadCopier, checkpoint.Pruner and
// checkpoint.DeltaHistorian.
//
// # Storage
//
// docs/storage-format.md is the one description of the format (version 2),
// with test vectors in testdata/format. Each checkpoint is one hash holding
// its header, its channel versions, one canonical JSON field per metadata
// key and its pending writes. Channel values live in one hash per (thread,
// namespace), one field per (channel, version): Put writes only the channels
// of newVersions, so an unchanged value is never written twice. Sorted sets
// whose members all score 0 order checkpoint IDs by their bytes. Every data
// key of a thread carries its generation, named by the thread's head hash:
// deleting, expiring or replacing a thread switches it to a new generation
// at once, and the old one is reclaimed in bounded steps.
//
// # Guarantees
//
//   - Put, PutWrites and GetTuple are each one script and one round trip; a
//     List page is one (two pipelined round trips when listing every thread
//     of a saver with several shards), with the metadata filter evaluated
//     inside Redis.
//   - Bounded work: no script examines more than a fixed budget (see the
//     work bounds of docs/storage-format.md). Whole-thread operations
//     (DeleteThread, DeleteForRuns, Prune, CopyThread, Verify, a long
//     DeltaChannelHistory) run in bounded steps, one round trip each; every
//     step leaves a state readers handle, and one cut off is finished by
//     calling it again or by Sweep. Measured on 20,000-checkpoint threads
//     with a second client PINGing: TestBoundedAtScale.
//   - Lost data is an error: a read that needs a key that should exist and
//     does not (evicted, deleted by hand) fails with checkpoint.ErrDataLoss
//     naming it; never a partial tuple, an older checkpoint as the latest, a
//     truncated history or a shorter list. New refuses a server whose
//     eviction policy may evict the saver's keys unless
//     Options.AcceptEviction is set.
//   - Validation before the first write: a refused call writes nothing.
//   - Nothing is applied twice: Put and PutWrites carry a call token, so a
//     call re-sent by go-redis after a lost reply changes nothing and
//     publishes no second event; every step of a multi-step operation is
//     idempotent.
//   - TTL per thread: Options.TTL is a lease on the whole thread, renewed by
//     every write (and read, with RefreshOnRead). Data keys carry no Redis
//     TTL; an expired thread reads as not found at once and is reclaimed by
//     later writes to its shard and by Sweep.
//   - No KEYS or SCAN: per-shard registries and indexes serve the listings
//     that span threads (only HSCAN and SSCAN of the saver's own hashes and
//     sets, with a COUNT).
//   - Every key of a thread carries its shard's hash tag, so every script
//     touches one slot and runs on Redis Cluster.
//   - Caller strings (thread IDs, namespaces) are escaped into keys; no
//     thread ID or namespace can reach another thread's keys or break the
//     hash tag. Checkpoint IDs are limited to printable ASCII without
//     % : { } * ? [ ] \ (uuid, ULID and the like) and sort by their bytes.
//
// # Errors
//
// Errors wrap the sentinels of package checkpoint (ErrNotFound,
// ErrInvalidConfig, ErrInvalidCheckpoint, ErrSerialization, ErrDataLoss) or
// the Redis error, and are matched with errors.Is. With encryption at rest,
// a value that cannot be opened wraps checkpoint.ErrDecrypt (which refines
// ErrSerialization).
//
// # Encryption at rest
//
// Options.Encryption (a checkpoint.Keyring) seals every channel value and
// pending-write value with AES-256-GCM under the ring's current key, after
// compression, bound to its place: the prefix, thread, namespace, channel
// and version, or the checkpoint, task and index of a write. Every read
// (GetTuple, List, DeltaChannelHistory, Verify, CopyThread) opens a value
// with the key its stored key id names and the place it was read from; a
// value altered, moved by hand to another place, sealed with a key the ring
// lacks, or in the clear (unless Options.ReadPlaintext, the migration) is
// refused with checkpoint.ErrDecrypt, never answered as state. CopyThread
// opens each value and seals it again for its target. Events carry the
// ciphertexts; package stream's Options.Encryption opens them. Thread IDs,
// namespaces, checkpoint IDs, channel names, versions, metadata and sizes
// stay in the clear (docs/operations.md, "Encryption at rest"; the format
// in docs/storage-format.md, "Encrypted values").
//
// # Observability
//
// Each call of a public operation is one OpenTelemetry span of kind client,
// named after the operation (a List: one span for the whole listing), with
// the database conventions' attributes (db.system.name "redis",
// db.operation.name, db.stored_procedure.name, server.address and
// server.port), the checkpoint's address (redcheck.thread_id, also
// gen_ai.conversation.id; redcheck.checkpoint_ns; redcheck.checkpoint_id),
// redcheck.round_trips and redcheck.steps; a failed call has status Error
// and error.type (data_loss, prefix_reset, invalid_checkpoint, ..., or the
// Redis error's prefix). A GetTuple that finds nothing is no failure
// (redcheck.found=false). The metrics are db.client.operation.duration
// (s), redcheck.client.data_loss and redcheck.client.refused_writes, with
// the operation and the error kind, never a thread. Saver.RegisterGauges
// adds, until its registration is unregistered, the gauges
// redcheck.reclaim.backlog and redcheck.threads.expired: the prefix's
// garbage, read at each collection. With Options.Logger,
// lost data is logged at Warn and a prefix reset at Error; nothing else.
// No span, metric or log holds a channel value, a pending write or a
// metadata value. Options.TracerProvider and Options.MeterProvider default
// to the global providers, no-ops until the application installs an SDK;
// the package imports OpenTelemetry's API only. docs/observability.md lists
// the spans, attributes and metrics, and the alerts they support.
package redissaver
