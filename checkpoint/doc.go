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
// Saver.Put stores a checkpoint; the Config passed to it names the parent
// checkpoint (build it with Parent, or Root for the first checkpoint of a
// thread), and the returned Config names the stored one. Only the channels
// listed in newVersions have their values written: a saver keeps one value
// per (thread, namespace, channel, version) and rebuilds ChannelValues from
// ChannelVersions when it reads a checkpoint back. Next builds the
// checkpoint of the next super-step from the previous one and returns the
// newVersions to pass with it; Empty is where a thread starts:
//
//	cp, newVersions := checkpoint.Next(checkpoint.Empty(), input, saver.NextVersion)
//	stored, err := saver.Put(ctx, checkpoint.Root(threadID, ""), cp, md, newVersions)
//	...
//	cp, newVersions = checkpoint.Next(cp, changed, saver.NextVersion)
//	stored, err = saver.Put(ctx, checkpoint.Parent(stored), cp, md, newVersions)
//
// Saver.PutWrites stores the pending writes of a task against a checkpoint:
// regular writes are insert-if-absent (so a repeated call is idempotent), the
// four special channels (ErrorChannel, ScheduledChannel, InterruptChannel,
// ResumeChannel) overwrite.
//
// # Listing: the first error ends the iteration
//
// Saver.List returns an iter.Seq2[*Tuple, error]. An error is yielded once,
// with a nil tuple, and is the LAST thing yielded: the listing is over, and
// a loop must return (or break) on it, never continue.
//
//	for tup, err := range saver.List(ctx, q) {
//		if err != nil {
//			return err // the listing stopped here
//		}
//		use(tup)
//	}
//
// Package stream's Subscribe is the other kind: it yields a transient error
// and goes on (it reconnects), so there a loop that returns on an error gives
// up the subscription; read its documentation.
//
// # Capabilities
//
// Beyond Saver, a saver may implement RunDeleter, ThreadCopier, Pruner and
// DeltaHistorian; callers discover them with a type assertion.
//
// # Encryption at rest
//
// A Keyring holds AES-256 keys named by key ids, one of them current
// (NewKeyring from bytes, NewKeyringFunc from a function a key management
// service serves). Given to a saver (redissaver.Options.Encryption), a
// stream consumer or a store, it seals every stored value with AES-256-GCM,
// bound to its place (prefix, thread, namespace, channel and version, or the
// pending write's checkpoint, task and index): a value altered, moved by
// hand to another place, sealed with a key the ring lacks, or stored in the
// clear where encryption is required reads as ErrDecrypt, never as state.
// The format is in docs/storage-format.md ("Encrypted values"), the
// operation (enabling, rotating, what stays in the clear) in
// docs/operations.md ("Encryption at rest").
//
// # Conformance
//
// Package checkpointtest holds the conformance kit: every case of the
// official LangGraph conformance suite, as Go subtests, that any Saver can run.
package checkpoint
