// Package stream reads the events redcheck savers publish: every write of
// a redissaver.Saver (Put, PutWrites, DeleteThread, DeleteForRuns,
// CopyThread, Prune) appends an event to the thread's Redis stream and to its
// shard's feed, from inside the Lua script that makes the write. An event
// therefore exists if and only if its write happened: none lost, none
// invented.
//
// # Subscribing
//
// Subscriber.Subscribe follows one thread (its stream) or every thread (the
// feeds of all shards), from now, from a cursor or from a time, and yields
// events as they arrive (XREAD BLOCK). Each Event carries a Cursor: start a
// new subscription from it to resume exactly after that event. A
// subscription survives Redis restarts: errors are yielded, and when the
// caller keeps ranging it reconnects with backoff (which ends as soon as the
// context does) and resumes from the last event it returned, so no event
// past it is lost or repeated, as long as Redis kept it; when Redis did not,
// the subscription says so (see Gaps).
//
// Options.Prefix and Options.Shards must be the saver's: Subscribe and
// Consume first read the prefix's meta key (written by redissaver.New), and
// a prefix written with another shard count or storage format is an error
// wrapping checkpoint.ErrInvalidConfig (Subscribe yields it and ends,
// Consume returns it), never a subscription that silently receives
// nothing. A prefix without a meta key (nothing written yet) is accepted.
//
// Order: a thread's events arrive in the order of its writes. Across
// threads, events of one shard arrive in order; events of different shards
// interleave.
//
// # Gaps
//
// Streams are trimmed by length (redissaver.Events), and Redis can lose
// them (a restart without persistence, a FLUSH, an eviction, the expiry of
// a deleted thread's stream). Lost events are never skipped silently:
//
//   - Subscribe yields an Event of TypeGap together with a *GapError
//     (errors.Is(err, ErrGap)) when its position is older than the first
//     entry its stream holds (GapTrimmed: trimmed, or lost and written
//     again; From is the position, To the entry delivery resumes at), or
//     when the stream it was reading is gone or empty, or was lost and
//     written again with entries at or before its position (a clock that
//     went back, a loss and a write within one millisecond: the stream no
//     longer holds the entry at the position, or holds another event under
//     its ID, though it holds one at or before it) (GapStreamLost; it then
//     reads the stream's next incarnation from its start). Delivery goes
//     on with the events that follow, exactly once. The gap comes after the
//     events before it and ahead of those after it, and its Cursor never
//     skips an event not yet yielded: for a lost stream it starts the next
//     incarnation; for a trimmed position it is that position, so a
//     subscription resumed from it reports the gap again, then the events
//     after it. When the stream holds neither the position before the
//     events a blocking read returned nor the one after them, Redis cannot
//     tell whether they followed a loss: a gap is reported on both sides
//     of them. The check reads the stream's first entry and the entries at
//     the reader's positions in the same MULTI as a non-blocking XREAD: at
//     the start, after an error, after a read that returned a whole Count
//     (the reader is behind), after a batch that waited for the caller to
//     take it, after a blocking read that timed out, and right after every
//     blocking read that returned events (judged from the position before
//     it, so a stream deleted and written again while the reader waited is
//     seen; that costs one round trip per wake-up: BenchmarkPutToSubscriber,
//     Put to event p50 116 µs before this check, 156 µs with it, for one
//     thread on loopback). FromBeginning and the start of a stream that was
//     empty are not entry IDs and claim no event: they are not checked. A
//     time (Query.Since, or a Cursor that holds one: a shard with no event
//     since) claims every event appended at or after it: when the stream's
//     first entry is past the time and Redis trimmed the stream (XINFO
//     STREAM, in the same MULTI: its entries-added is past its length; or
//     an earlier read saw it hold an entry at or before the time, and
//     XINFO is no longer asked), the gap is GapTrimmed without a From. On
//     a server that does not count the entries added (before Redis 7.0;
//     miniredis), Subscribe yields ErrTrimUnknown instead, once, and
//     delivers from the first entry. A time holds no entry to check, so a
//     stream lost (deleted, expired, flushed) before the subscription read
//     anything from it leaves no trace of the events it held: those are
//     not reported. Redis does not keep the IDs it trims, so a trim that
//     fell exactly after the position (or, for a time, wholly before it)
//     is reported too, though nothing was lost.
//     A stream keeps no identity across its losses, so a position carries
//     one of its entry: a Cursor holds, after each entry ID, "~" and a mark
//     of that entry's fields (8 hex digits of a 32-bit FNV-1a hash), and an
//     entry at the position's ID with another mark is another event. A
//     cursor without marks (an entry ID as Query.From, or a cursor from
//     before marks) is still taken; until the subscription has read an
//     entry of its own, a new incarnation holding an entry with exactly its
//     ID is then taken for the old one.
//   - Consume reports through ConsumeOptions.OnError, with an Event of
//     TypeGap: a group re-created after it (or its stream) vanished
//     (GapGroupLost, once per stream, not once per poll), a group whose
//     stream was trimmed past entries it never delivered (GapTrimmed, From
//     its last delivered entry, To the stream's first: its consumers fell
//     further behind than the stream's length; judged, like a
//     subscription's, in the same MULTI as a non-blocking XREADGROUP, and
//     reported too when the trim fell exactly after that entry; after a
//     blocking read that returned entries, also from where the group stood
//     before it, as the last checked read left it, and then ahead of those
//     entries: that read skipped what the trim removed; a group created at
//     the start of its stream (FromBeginning) has delivered no entry to
//     judge from: events appended and trimmed away before its first read
//     are not reported), and
//     pending entries trimmed away before they were handled
//     (GapPendingTrimmed, with their IDs in Lost: XAUTOCLAIM's list of deleted entries, or, on a
//     server without it, the idle pending entries older than the stream's
//     first entry).
//
// The web UI ("redcheck ui", internal/ui) marks a gap in its timeline;
// redcheck tail prints it as a line.
//
// # Connections
//
// A blocking read holds a connection for as long as it waits. So that
// subscriptions never take connections from the application's pool, they
// do not use the client given to New: each Subscribe and Consume opens a
// client of its own from that client's Options (a *redis.Client or a
// *redis.ClusterClient; one connection per reader: one in all, or one per
// shard feed on a Cluster) and closes it when it ends. Options.BlockingClient
// replaces that with a client the caller provides for every blocking read.
// Short commands (positions, acknowledgements, claims, dead letters) use
// the client given to New. With 100 live subscriptions on a client with the
// default pool, a Put loop on the same client keeps its latency (figures in
// TestSubscriptionsLeavePoolAlone), where sharing the pool made a Put wait
// for seconds.
//
// # Work queues
//
// Subscriber.Consume runs a consumer of a consumer group over the feeds (or
// one thread's stream): a handler that returns nil acknowledges its event;
// an event left unacknowledged for MinIdle (the handler failed, or its
// consumer died) is claimed by another consumer (XAUTOCLAIM, up to Count
// per stream and round) and handled again; after MaxDeliveries it moves to
// the group's dead-letter stream, trimmed to about DeadLetterMaxLen entries
// and following the TTL of the stream it serves. Handler errors and panics
// are contained and reported through ConsumeOptions.OnError. A group that
// disappears while Consume runs is created again (MKSTREAM) at the last
// entry this consumer read from that stream when the stream still holds
// that very entry (its ID and its mark), else at "0" (every entry the
// stream holds), so every event written since the loss is handled; one gap
// is reported. A group whose consumers fell behind a trim of its stream
// reports one gap when it reads again.
//
// # Memory bounds
//
// With the defaults (redissaver.Events: MaxLen 10,000, FeedMaxLen 100,000,
// MaxValueBytes 64 KiB; DeadLetterMaxLen 10,000), and Redis trimming in
// whole macro nodes (stream-node-max-entries, 100 by default), so up to 100
// entries above each length:
//
//   - An event without values takes about 210 bytes (measured on Redis
//     7.0: a 17-byte thread ID, two channels, step, source, run ID and TS),
//     plus the length of its IDs and channel names.
//   - Per thread: its stream, at most 10,100 events: about 2.1 MB without
//     values. A deleted thread's stream expires after RetainDeleted (one
//     hour); its dead-letter streams take that TTL at the next burial or
//     reclaim round of a consumer.
//   - Per shard: its feed, at most 100,100 events: about 21 MB without
//     values.
//   - Per group and stream: a dead-letter stream of at most 10,100 entries,
//     each an event plus about 100 bytes (its origin stream, ID and
//     delivery count).
//   - With IncludeValues (redissaver.Events), an event also carries,
//     inline, the stored values of its changed channels (or writes), each
//     up to MaxValueBytes (64 KiB) and all together up to MaxEventBytes
//     (64 KiB), at most 256 of them; the other channels' values travel by
//     reference (ValueRefs: a "vref:<channel>" field holding the version, a
//     few dozen bytes; read the value with the saver's GetTuple). The saver
//     then also bounds the streams by bytes: their lengths drop to
//     StreamBytes (64 MiB) and FeedBytes (512 MiB) divided by MaxEventBytes
//     plus 1 KiB, that is 1,008 events per thread and 8,065 per shard feed
//     with the defaults. Worst case with the defaults and Redis's macro
//     nodes: about 72 MB per thread stream and 520 MB per shard feed.
//     TestValueStreamsBounded checks the length and per-entry bounds under
//     a long run.
//
// # Redis Cluster
//
// A thread's stream lives in its shard's slot, with all its other keys, so
// every write and its event are one atomic script on a Cluster too. The
// all-threads feed is one stream per shard, in the shard's slot, so it is
// written atomically by the same script as well; a subscriber to every
// thread reads all the shards' feeds (one blocking read per shard on a
// Cluster, one multi-key read otherwise), so it still receives every event.
// A dead-letter stream shares its stream's slot.
//
// # Encryption at rest
//
// When the saver encrypts (redissaver.Options.Encryption), the values an
// event carries (IncludeValues) are ciphertexts bound to their place; give
// the subscriber the same keyring in Options.Encryption and Subscribe,
// Consume and Subscriber.DecodeEvent open them. A value that fails to open,
// or plaintext without Options.ReadPlaintext, makes the event fail to decode
// with an error wrapping both ErrMalformedEvent and checkpoint.ErrDecrypt;
// the package-level DecodeEvent holds no keyring and refuses encrypted
// values so.
//
// # Observability
//
// Consume reports each event it hands to the handler as an OpenTelemetry
// span of kind consumer ("process <group>", the messaging conventions'
// attributes and the event's thread, namespace and checkpoint id; the
// handler's context carries it), and the metrics
// messaging.process.duration, messaging.client.consumed.messages,
// redcheck.consumer.redeliveries, redcheck.consumer.dead_letters and
// redcheck.consumer.gaps, and, while it
// runs, the gauge redcheck.consumer.lag (the group's entries not yet
// delivered, per stream), through
// Options.TracerProvider and Options.MeterProvider (default: the global
// providers, no-ops until the application installs an SDK). No span or
// metric holds a value or an error's message. The handler's span links to
// the span that wrote the event, whose W3C trace context the event carries
// (Event.TraceParent, Event.TraceState, Event.SpanContext). Subscribe
// reports each event it yields as a "receive" span, linked the same way,
// that lasts until the caller's loop body returns. Options.Logger, when
// set, receives the gaps a consumer meets and the events it dead-letters.
// docs/observability.md lists them.
package stream
