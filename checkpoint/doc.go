// Package checkpoint defines the protocol every redcheck saver implements: the
// types of a LangGraph-style checkpoint (Config, Checkpoint, Metadata, Tuple,
// pending writes), the Saver interface with its optional capability
// interfaces, the Serializer that turns channel values into bytes, and the
// errors callers match with errors.Is.
//
// # Checkpoints, threads and namespaces
//
// An agent graph saves a Checkpoint of its state at every super-step. Each
// checkpoint lives in a thread (Config.ThreadID) and a namespace
// (Config.CheckpointNS; "" is the root graph, subgraphs use names such as
// "child:1" or "node:uuid|inner:uuid"). Checkpoints are ordered by the bytes of
// their ID: the latest checkpoint of a (thread, namespace) is the one with the
// greatest ID, List returns the newest first and ListQuery.Before is a strict
// byte-wise upper bound. NewID returns monotonic ULIDs that satisfy this; any
// other scheme that sorts by creation time (LangGraph's uuid6, UUIDv7) works
// as well, but one thread should not mix schemes.
//
// # Saving
//
// Saver.Put stores a checkpoint; the Config passed to it names the PARENT
// checkpoint, and the returned Config names the stored one. Only the channels
// listed in newVersions have their values written: a saver keeps one value
// per (thread, namespace, channel, version) and rebuilds ChannelValues from
// ChannelVersions when it reads a checkpoint back. Saver.PutWrites stores the
// pending writes of a task against a checkpoint: regular writes are
// insert-if-absent (so a repeated call is idempotent), the four special
// channels (ErrorChannel, ScheduledChannel, InterruptChannel, ResumeChannel)
// overwrite.
//
// # Capabilities
//
// Beyond Saver, a saver may implement RunDeleter, ThreadCopier, Pruner and
// DeltaHistorian; callers discover them with a type assertion.
//
// # Conformance
//
// Package checkpointtest holds the conformance kit: every case of the
// official LangGraph conformance suite, as Go subtests, that any Saver can run.
package checkpoint
