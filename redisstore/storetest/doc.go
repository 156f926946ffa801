// Package storetest is the behavioural test kit of redisstore: LangGraph's
// store tests (langgraph libs/checkpoint/tests/test_store.py and
// libs/checkpoint-postgres/tests/test_store.py) ported to Go subtests, plus
// the contract points found by porting LangGraph's SQLite and JS store
// tests too (group contract: non-finite filter operands, [] versus {},
// dotted top-level keys, nil values that delete, the Limit and Offset caps,
// walks of many steps), plus cases for what the Redis store promises beyond
// them: injective addressing, whole-label prefixes, filters evaluated
// before paging, TTL expiry and sweeping, and an exact top-k by cosine
// similarity checked against brute force.
//
// # Running it
//
// Call Run from a test, with an Env whose New returns a store on fresh,
// isolated storage for the options it is given:
//
//	func TestKit(t *testing.T) {
//		mr, rdb := redistest.Mini(t)
//		storetest.Run(t, storetest.Env{
//			New: func(t *testing.T, o redisstore.Options) *redisstore.Store {
//				o.Prefix = redistest.Prefix(t)
//				s, err := redisstore.New(context.Background(), rdb, o)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return s
//			},
//			Advance: func(t *testing.T, d time.Duration) { ... },
//		})
//	}
//
// Each case is a subtest named group/case (basic/update_keeps_created_at,
// vector/exact_top_k, ...), so -run selects a group or a case. Every case
// creates its own stores: New must give each call its own prefix (or
// database), and the options' Prefix is the kit's to ignore.
//
// # Time
//
// The TTL cases move time with Env.Advance, which must move the clock that
// Redis expires keys by and the clock its TIME command reads: on miniredis
// both SetTime and FastForward, on a real server a sleep. The cases use
// TTLs of a few times Env.Unit (default 250ms) and check them with margins
// of at least half a unit, so a real server run sleeps a few seconds in
// all. With Advance nil, the TTL cases are skipped.
//
// # Go mapping of the Python assertions
//
// Python's None from get is ErrNotFound from Get (and a nil Result.Item in
// Batch); response_metadata["score"] and .score are SearchItem.Score;
// index=False is redisstore.NoIndex(), index=[...] is WithIndex(...),
// ttl= is WithTTL, refresh_ttl= is RefreshOn or RefreshOff. LangGraph's
// CharacterEmbeddings(dims=500) becomes the kit's use of embed.Hashing with
// 512 dimensions. Values compare by JSON value: an int put comes back an
// int64, 1.0 comes back 1.
package storetest
