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
// caller keeps ranging it reconnects with backoff and resumes from the last
// event it returned, so no event past it is lost or repeated (as long as
// Redis kept it: streams are trimmed by length, see redissaver.Events).
//
// Order: a thread's events arrive in the order of its writes. Across
// threads, events of one shard arrive in order; events of different shards
// interleave.
//
// # Work queues
//
// Subscriber.Consume runs a consumer of a consumer group over the feeds (or
// one thread's stream): a handler that returns nil acknowledges its event;
// an event left unacknowledged for MinIdle (the handler failed, or its
// consumer died) is claimed by another consumer and handled again; after
// MaxDeliveries it moves to the group's dead-letter stream. Handler errors
// and panics are contained and reported through ConsumeOptions.OnError.
//
// # Redis Cluster
//
// A thread's stream lives in its shard's slot, with all its other keys, so
// every write and its event are one atomic script on a Cluster too. The
// all-threads feed is one stream per shard, in the shard's slot, so it is
// written atomically by the same script as well; a subscriber to every
// thread reads all the shards' feeds (one blocking read per shard on a
// Cluster, one multi-key read otherwise), so it still receives every event.
package stream
