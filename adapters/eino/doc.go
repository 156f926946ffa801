// Package eino is a CheckPointStore for cloudwego/eino (compose graphs and
// ADK runners) on a redcheck redissaver.Saver: eino's interrupted runs are
// kept in plain Redis with redcheck's guarantees.
//
//	saver, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: "agents", TTL: 24 * time.Hour})
//	...
//	store, err := eino.New(saver, eino.Options{PruneEvery: 1})
//	...
//	// a compose graph
//	run, err := graph.Compile(ctx, compose.WithCheckPointStore(store))
//	out, err := run.Invoke(ctx, in, compose.WithCheckPointID("order-1001"))
//	// an ADK agent
//	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: store})
//	events := runner.Query(ctx, "refund order 1001", adk.WithCheckPointID("order-1001"))
//
// The module is apart from redcheck's (github.com/graphstate/redcheck
// never depends on eino). It is built and tested against eino v0.7.36.
//
// # Mapping
//
// An eino checkpoint ID is a redcheck thread ID, as it is (any bytes, 1 to
// 4096 of them). Each Set stores a new checkpoint of that thread, in the
// root namespace "", whose one channel, "eino" (Channel), holds eino's
// bytes; its metadata is {"source": "eino", "step": N}, N counting the Sets
// of the ID from 0, plus what Options.Metadata adds. The checkpoint is a
// child of the latest one, so the thread's history is the sequence of
// eino's checkpoints of that ID (an interrupt, a resume that interrupts
// again, ...). Get reads the latest checkpoint back.
//
// What eino users get from the saver:
//
//   - Atomic writes: a Set is one Put, one Lua script; a reader sees the
//     previous checkpoint or the new one, whole, never a part.
//   - A lease per checkpoint ID: with the saver's Options.TTL, an ID
//     expires TTL after its last Set (or read, with RefreshOnRead), as a
//     whole, and then reads as not found (eino starts anew); its keys are
//     reclaimed by later writes to its shard and by Saver.Sweep.
//   - Compression of eino's bytes (the saver's Options.Compression).
//   - Bounded work: a Set is two round trips (a read of the latest, then
//     the Put) whatever the history's length; Delete and Prune work in
//     bounded steps that never block Redis for long.
//   - An error instead of a wrong resume: when Redis lost part of a
//     checkpoint (eviction, a manual DEL), Get answers an error wrapping
//     checkpoint.ErrDataLoss, never an older checkpoint and never "not
//     found" (which would make eino start the run over). Set refuses to
//     write over such a loss; Delete the ID to start it again (with the
//     ID's head key lost, Delete reports the loss and clears the ID).
//   - Events: every Set publishes a checkpoint event (thread = the eino
//     checkpoint ID, step, source=eino, channels=[eino]) that
//     `redcheck tail --prefix P` prints live; Delete publishes
//     thread_deleted, a prune pruned.
//   - History: Store.History lists an ID's checkpoints, newest first, with
//     their bytes; Saver().List(ctx, checkpoint.ListQuery{ThreadID: id})
//     lists the stored checkpoints as the saver sees them.
//   - Forks: Store.Fork(ctx, source, checkpointID, target) makes any stored
//     checkpoint of one ID the latest of another, to resume it again (with
//     another answer to the interrupt, say) while the source stays;
//     Saver().CopyThread copies a whole history.
//
// # Semantics
//
// Set reads the latest checkpoint of the ID, then puts the new one as its
// child with an ID greater than the latest's (a ULID; also when the
// writer's clock lags the one of the process that wrote the latest), so a
// Get that follows a Set returns its bytes unless another Set came between.
// Concurrent Sets of one ID (eino makes none for one run) are each stored
// whole; the one with the greater checkpoint ID is the latest. A Set whose
// read of the latest fails with checkpoint.ErrDataLoss writes nothing.
//
// eino writes a checkpoint when a run interrupts and reads it when the run
// resumes; it never deletes one, so a finished run's last checkpoint stays
// until Delete or the lease. Call Store.Delete(ctx, id) when the run is
// done (eino v0.7.36 has no optional deleter interface for a store to
// implement). Options.PruneEvery prunes older checkpoints after Sets, so
// an ID's memory stays that of its latest checkpoint (PruneEvery 1) or of
// a few; Store.Prune does it on demand.
//
// Get answers nil, false, nil for an ID with no checkpoint (never written,
// deleted, or expired) and an error for anything else: a lost key
// (checkpoint.ErrDataLoss), a thread that holds checkpoints but none of
// eino's (ErrNotEino), an empty or over-long ID
// (checkpoint.ErrInvalidConfig), a Redis error.
package eino
