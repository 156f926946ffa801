// Package memsaver is an in-memory checkpoint.Saver: the reference
// implementation of the redcheck contract, for tests and for single-process
// programs that do not need persistence.
//
// A Saver implements checkpoint.Saver and every capability interface
// (checkpoint.RunDeleter, checkpoint.ThreadCopier, checkpoint.Pruner and
// checkpoint.DeltaHistorian) and passes the whole conformance kit of package
// checkpointtest. It deliberately stores data the way the Redis saver does,
// so that the two behave alike:
//
//   - Channel values are kept once per (thread, namespace, channel,
//     version), written only for the channels in Put's newVersions, and
//     serialized through the Options.Serializer: what a caller reads back is
//     always a fresh copy. A checkpoint's ChannelValues is rebuilt from its
//     ChannelVersions when it is read.
//   - Metadata is stored as the canonical JSON of each value
//     (checkpoint.EncodeMetadataValue) and decoded on read, so integers come
//     back as int64, objects as map[string]any and arrays as []any, and list
//     filters compare values with checkpoint.Metadata.Matches.
//   - Pending writes are keyed by (task ID, index): regular writes are
//     insert-if-absent, the special channels overwrite, and they are read
//     back ordered by (task ID, index). Writes to a checkpoint not stored
//     yet are kept for it, and its Put takes them (LangGraph's runtime
//     sends a step's writes while the Put of its checkpoint is under way);
//     a Put naming its own id as parent replaces it in place.
//   - Checkpoint IDs must be 1 to 128 bytes in 0x21..0x7e, without any of
//     % : { } * ? [ ] \ (checkpoint.ErrInvalidCheckpoint); thread IDs and
//     namespaces are at most 4096 bytes (checkpoint.ErrInvalidConfig).
//   - The latest checkpoint is the one with the greatest ID in byte order;
//     List returns the newest ID first across threads and namespaces.
//   - A checkpoint with V < 4 whose parent holds writes to
//     checkpoint.TasksChannel reads back with those values as the channel's
//     value (the legacy pending-sends migration).
//
// Everything is guarded by one mutex, so a Saver is safe for concurrent use.
// Nothing is ever evicted: memory grows with the data until threads are
// deleted or pruned.
//
//	s := memsaver.New(memsaver.Options{})
//	stored, err := s.Put(ctx, checkpoint.Config{ThreadID: "t1"}, cp, md, newVersions)
package memsaver
