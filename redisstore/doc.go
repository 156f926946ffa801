// Package redisstore is a long-term memory store for agents on plain Redis 7
// (or Valkey), with no modules: JSON items addressed by a namespace and a
// key, shared across threads, with filters, TTLs and exact semantic search,
// every call in steps of bounded work. Its semantics are those of
// LangGraph's BaseStore (langgraph.store.base), whose tests it passes in Go
// form (package storetest).
//
// # Use
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	defer rdb.Close() // the caller owns the client
//	emb, _ := embed.NewHashing(384) // or a real model behind Embedder
//	store, err := redisstore.New(context.Background(), rdb, redisstore.Options{
//		Prefix:   "myapp:memory",
//		Embedder: emb, Dims: 384, Fields: []string{"text"},
//		TTL:      30 * 24 * time.Hour, // refreshed by reads (RefreshOnRead)
//	})
//	err = store.Put(ctx, []string{"users", userID, "memories"}, "m1",
//		map[string]any{"text": "prefers metric units", "kind": "preference"})
//	hits, err := store.Search(ctx, []string{"users", userID}, redisstore.SearchOptions{
//		Query: "which units?", Filter: map[string]any{"kind": "preference"}, Limit: 5,
//	})
//
// # Items and namespaces
//
// An item is addressed by exactly (namespace, key): a namespace is a
// non-empty list of non-empty labels, any bytes each, and no two addresses
// share storage — ("a", "b:c") and ("a:b", "c") never meet, whatever the
// labels hold. A Put of an existing item replaces its value, keeps its
// CreatedAt and moves its UpdatedAt (both from the Redis server's clock);
// there is no new ID per put. Search takes a namespace prefix that matches
// whole labels: ("a") finds ("a") and ("a", "b"), never ("ab").
// ListNamespaces lists namespaces with prefix and suffix patterns ("*"
// matches one label), cut to a depth, in the order of label tuples.
//
// As in LangGraph: a Search with a query on a store without an Embedder
// ignores the query (plain search, nil scores); a nil value in Put or PutOp
// deletes the item; reads refresh TTLs unless told otherwise
// (RefreshOnRead's zero value is on); filters with infinite or NaN operands
// mean what float64 comparisons mean ($lt +Inf matches every number, $eq
// NaN none); [] and {} are different values; a filter key names a
// top-level field when the value has a field of that exact name ("a.b"),
// else a dotted path.
//
// Where this differs from LangGraph: labels may hold '.' and a namespace may
// start with "langgraph" (LangGraph reserves both for its own storage
// reasons); plain equality in a filter compares whole JSON values
// (LangGraph's in-memory store matches objects by subset); a null field and
// a missing one are the same to a filter; Limit and Offset have caps
// (MaxSearchLimit 1,000 and MaxSearchOffset 10,000; MaxListLimit 1,000 and
// MaxListOffset 100,000), above which a call fails with ErrInvalidArgument
// rather than blocking Redis or filling the client's memory.
//
// # Keys
//
// Every key of a store starts with "{Prefix}:", P below:
//
//	{P}:meta        hash  format "store-1", dims (the vectors' length) and registry "marked" (the
//	                      registry holds its marker; New adds both to a prefix of an earlier
//	                      version): New writes it for a
//	                      new prefix and refuses a prefix of another format or dims, and one
//	                      whose registry exists without it (checkpoint.ErrDataLoss)
//	{P}:ns          zset  namespace registry: score 0, member = sortable form 0x00 0x00 encoded form;
//	                      and the marker member "" (score 0), written by New with the meta key
//	                      (meta field registry "marked"): a registry without it was lost
//	{P}:exp         zset  registry members of namespaces holding items with a TTL, scored by
//	                      their earliest expiry (ms; never later than the real one)
//	{P}:n:NS        zset  the namespace's items: encoded key, scored by UpdatedAt (µs)
//	{P}:x:NS        zset  the namespace's items with a TTL: encoded key, scored by expiry (ms)
//	{P}:i:NS:K      hash  one item: v value (canonical JSON, or with Options.Encryption the
//	                      encrypted form of pack("json", it)), c CreatedAt and u UpdatedAt
//	                      (µs), t TTL (ms); with vectors, n their number and w the
//	                      float32 vectors (little-endian); items written by earlier
//	                      versions may also hold q and s, which are no longer read
//
// NS is the encoded namespace, keys.Encode of each label joined by ':', and
// K is keys.Encode of the key: Encode escapes ':', '{', '}' and every byte
// outside a safe set, so the layout is injective and no caller string can
// break the hash tag. The registry's sortable form writes each label with
// its 0x00 bytes doubled as 0x00 0xFF, then 0x00 0x01: byte order is then
// label-tuple order, and a prefix's range is one ZRANGEBYLEX.
//
// # Redis Cluster
//
// The prefix is the hash tag: a whole store lives in one Cluster slot, so
// every script, whatever namespaces it spans, runs on one node, free of
// cross-slot errors. The price is that one store's load
// and memory sit on one master. To spread data over a Cluster, give each
// tenant (or group of tenants) a store of its own, with its own prefix:
// stores are cheap (New talks to nobody) and fully isolated. Partitioning a
// single store by namespace would make every search or listing that spans
// partitions a fan-out with a merge in Go; this package does not do that.
//
// # Bounded work
//
// No call blocks Redis for long, whatever the number of items, dimensions
// or namespaces: every script does a bounded amount of work, and calls
// over large collections take several round trips, each leaving the store
// as readers expect. The bounds, and what they cost:
//
//	Put, Delete          1 round trip, one script (plus one Embedder call for Put)
//	Get                  1 round trip
//	Search               1 round trip per step of the walk, then 1 per 64 items of
//	                     the page (none for an empty page); plus one Embedder call
//	                     with a Query
//	ListNamespaces       1 round trip per 200 registry members examined, stopping
//	                     as soon as the page is full
//	Batch                one script per 64 gets (per refresh setting); each search
//	                     and listing as above; then the writes, one atomic script
//	                     for up to 32 writes and 256 KiB, else several in order (an
//	                     error then says how many writes were applied)
//	Sweep                1 round trip per 1000 expired entries
//
// A step of a Search walk (store_scan.lua) reads at most 200 index
// entries or namespaces, each with one HMGET, and returns at most about
// 64 KiB of values and vectors. The walk visits the namespaces under the
// prefix in registry order and each one's items newest first, resuming
// from a cursor (namespace, UpdatedAt, key) that survives concurrent
// writes: an item present and unchanged throughout is met once. The
// client filters (package-side, on the values the walk returns), scores,
// and keeps the best Offset+Limit in a bounded heap; then it reads the
// page's items (with their TTL refresh) and, should one have changed or
// left in between, runs the search again, three times at most. Without a
// filter or a query, each namespace's walk stops after Offset+Limit items
// (its newest), so a search costs O(namespaces under the prefix +
// Offset+Limit per namespace); with a filter or a query, every item under
// the prefix is read, a step at a time.
//
// Measured on the shared 2-vCPU machine (Redis 7.0.15, go test
// -run TestBoundedWork -v): with 10,000 items of 384 dimensions in 20,000
// namespaces and a concurrent PING loop, the worst SLOWLOG entry of every
// kind of call was typically 1 to 12 ms and the worst PING 1 to 17 ms,
// under the load of other jobs (TestBoundedWork fails when a call stays
// above 50 ms in three measurements).
//
// # Semantic search
//
// With an Embedder, Put embeds the texts at Options.Fields (or WithIndex)
// and stores each vector beside the item, as float32, in the item's hash,
// so it expires and is deleted with it. Search with a Query embeds it
// (locally, one Embedder call) and walks the items as above with their
// vectors; the client scores each one by the cosine similarity of its best
// vector to the query, in float64 from the stored float32 (an item scores
// by its best vector; items stored without vectors are left out). The
// ranking is exact: every vector is scored, none is approximated.
// Candidates are kept in a heap of Offset+Limit entries ordered by a
// strict total order (score, then newer UpdatedAt, then the item's
// encoded address), so the cost does not depend on how many scores tie.
// The cost is O(items under the prefix × dimensions), in Redis a memory
// copy of each vector (bounded per step) and in the client the
// arithmetic, and it is the bytes of the vectors that cross the network.
// There is no server-side vector index (RediSearch or valkey-search);
// search narrower prefixes (a user's own namespace) to search less.
//
// Figures of BenchmarkQueryScale (a query over the whole store, top 10; one
// namespace per item; p50 of 5 searches; worst Redis block as SLOWLOG
// saw it; x is p50 over a brute-force scan of the same float32 vectors in
// Go, in process, on the same loaded machine):
//
//	items × dims    p50      worst SLOWLOG   worst PING   Go brute force   p50 / brute
//	10k × 384       136 ms   54 ms (a)       56 ms        12 ms            11×
//	10k × 1,536     260 ms   4.9 ms          8.2 ms       42 ms            6.3×
//	50k × 384       655 ms   5.7 ms          7.4 ms       52 ms            12.6×
//	50k × 1,536     1.48 s   16 ms           140 ms (b)   216 ms           6.8×
//	100k × 384      1.32 s   9.8 ms          11 ms        111 ms           11.9×
//	100k × 1,536    3.00 s   11 ms           45 ms        413 ms           7.3×
//
// (a) other runs of the same: 4.5 to 14 ms; the machine's load average
// stood between 4 and 8, and a step that Redis's process is descheduled
// in shows as a long SLOWLOG entry. (b) not matched by SLOWLOG: the
// client's pause. Before the walk in steps, one query search of 50k × 1,536
// blocked Redis for 1.71 s. The time goes to moving the vectors (4 bytes a
// dimension) out of Redis and through the client, a step at a time; the
// arithmetic is the brute-force column.
//
// # TTL
//
// Options.TTL gives every item a time to live, WithTTL one item; the item's
// key expires in Redis itself. Get and Search extend the TTL of the items
// they return, as LangGraph's refresh_on_read does by default, unless
// Options.RefreshOnRead is RefreshOff or the read says RefreshOff. Expired items are
// never returned: Get and Search read the item itself, and ListNamespaces
// checks each namespace's expiry index for a live item. Their index entries
// are swept by every write (a few at a time), by the reads that meet them,
// and by Sweep.
//
// # Encryption at rest
//
// With Options.Encryption (a checkpoint.Keyring), Put stores each item's
// value encrypted with AES-256-GCM under the ring's current key: the
// encrypted form of pack("json", canonical JSON) of docs/storage-format.md
// ("Encrypted values"), its associated data the store prefix, the item's
// namespace labels and key. Get, Search (filters too: they run in the
// client, on the values it decrypts) and Batch open each value with the key
// its id names; a value that fails to open (altered, moved by hand to
// another item, sealed with a key the ring lacks) is an error wrapping
// ErrDecrypt and checkpoint.ErrDecrypt, never a value, and so is a value
// stored in the clear unless Options.ReadPlaintext (the migration option).
// Namespaces, keys, timestamps, TTLs and the vector count stay in the clear;
// vectors would too, so an Embedder with Encryption needs
// Options.EmbeddingsInClear (a vector reveals much of its text). redcheck
// rekey --store re-encrypts a store's items under the current key
// (docs/operations.md, "Encryption at rest").
//
// # Errors
//
// Errors wrap the package's sentinels (ErrNotFound, ErrInvalidNamespace,
// ErrInvalidFilter, ErrEmbedding, ...) or the Redis error, and are matched
// with errors.Is. Bad input is refused before anything is sent. Data the
// store did not write (a hand-edited key) gives ErrCorrupt or is skipped,
// never a panic.
//
// Lost data (a key evicted or deleted by hand) is an error wrapping
// checkpoint.ErrDataLoss, never fewer items: an item its namespace's index
// names whose hash is gone while its expiry index does not say it expired
// (Get, Search), a namespace the registry names without its index (Search,
// ListNamespaces, and Put and Delete, which write nothing then, rather than
// make the index anew with only what they put). Every script checks before
// its first write. The registry lost whole is told by its marker member
// (every call, and New, answer ErrDataLoss). One loss cannot be told: a
// namespace index lost while its items had a TTL reads as a namespace whose
// items expired.
//
// # Observability
//
// Each call of a public operation is one OpenTelemetry span of kind client
// (StorePut, StoreGet, StoreSearch...: the database conventions'
// attributes, the namespace and key it addresses, its round trips and
// bytes), with the metrics db.client.operation.duration,
// redcheck.client.data_loss, redcheck.store.written and
// redcheck.store.read, through Options.TracerProvider and
// Options.MeterProvider (default: the global providers, no-ops until the
// application installs an SDK); Options.Logger receives the data losses the
// store detects. No span, metric or log holds an item's value, a vector, a
// query's text or a filter; namespaces and keys are span attributes, never
// metric attributes. docs/observability.md lists them.
package redisstore
