// Package ui is the web UI of "redcheck ui": a page and a JSON API over the
// checkpoints a redissaver.Saver keeps under one prefix, live through the
// events of package stream.
//
// The page (static/, embedded, no build step, no network beyond the server)
// lists the threads newest first, page by page, with a search by thread ID
// and filters by run ID and metadata; shows a thread's timeline (steps,
// sources, channels changed, task writes, a marker where events were lost),
// the branch tree of its checkpoints and the threads it was copied from or
// to, a checkpoint's state, the diff between any two checkpoints
// (internal/inspect, as "redcheck diff") and an inbox of the threads waiting
// on an interrupt. With Options.AllowWrites it also forks (copies) a thread
// at a checkpoint, deletes and prunes threads; without it the API refuses
// those with 403.
//
// The JSON API:
//
//	GET    /api/status                                  the connection: Redis, prefix, shards, whether writes are allowed
//	GET    /api/threads                                 a page of threads, newest first (?limit=N&before=ID&run_id=R&filter=k=v...)
//	GET    /api/threads/{thread}                        one thread and its latest checkpoint (the search by ID)
//	GET    /api/threads/{thread}/checkpoints            a page of its checkpoints, newest first (?before=ID&limit=N)
//	GET    /api/threads/{thread}/checkpoints/{id}?ns=   the state of one checkpoint
//	GET    /api/threads/{thread}/diff?a=ID[&b=ID][&ns=] what changed from B (default: A's parent) to A
//	GET    /api/threads/{thread}/branches               the threads it was copied from and to (recent events)
//	GET    /api/inbox                                   threads whose latest checkpoint waits on an interrupt (?scan=N)
//	GET    /api/events                                  events as Server-Sent Events (?thread=T, ?from=beginning)
//	POST   /api/threads/{thread}/copy                   {"target": T, "at": ID}: copy, and fork at ID (AllowWrites)
//	POST   /api/threads/{thread}/prune                  keep the latest checkpoint of each namespace (AllowWrites)
//	DELETE /api/threads/{thread}                        delete the thread (AllowWrites)
//
// Every list is paged, so a prefix with 100,000 threads or a thread with
// 10,000 checkpoints costs a page's work per request. Errors are JSON
// {"error": text, "kind": k}, kind one of "unreachable" (Redis cannot be
// reached), "no_data" (the prefix holds no redcheck data: a wrong prefix),
// "config" (the prefix was written with another shard count or format),
// "data_loss" (checkpoint.ErrDataLoss), "decrypt" (checkpoint.ErrDecrypt:
// an encrypted value without its key, a value that fails to open, or a
// plaintext value where encryption is required), "not_found", "bad_request",
// "forbidden" or "error".
package ui
