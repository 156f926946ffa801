// Package checkpointtest is the conformance kit for checkpoint.Saver
// implementations: every case of LangGraph's official Python conformance
// suite (langgraph-checkpoint-conformance), ported to Go subtests, plus edge
// cases that pin down the Go API.
//
// # Running it
//
// Call Run from a test in the saver's package, with a function that returns
// a saver backed by fresh, isolated storage. This is memsaver's own test
// (checkpoint/memsaver/memsaver_test.go, quoted verbatim: a test of this
// package checks that it still is):
//
//	func TestConformance(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
//			return memsaver.New(memsaver.Options{})
//		})
//	}
//
// A saver backed by Redis opens its client in newSaver and closes it with
// t.Cleanup. A saver that does not implement some of the optional
// capabilities says so by name, or the kit fails its groups:
//
//	checkpointtest.Run(t, newSaver, checkpointtest.Without(checkpointtest.Pruner))
//
// Run it like any test, e.g. go test -race -run TestConformance/list ./...;
// each case is a subtest named group/case, such as put/put_returns_config or
// delta_channel_history/history_multi_channel, so -run selects a group or a
// single case.
//
// # Groups
//
// The groups run in the order of the Python harness. RunBase runs the five
// groups every saver must pass: put (17 cases), put_writes (10), get_tuple
// (10), list (16, plus list_global_search, which the Python suite dropped
// and this kit requires) and delete_thread (5). RunExtended runs the groups
// of the optional capabilities: delete_for_runs (7, checkpoint.RunDeleter),
// copy_thread (8, checkpoint.ThreadCopier), prune (8, checkpoint.Pruner) and
// delta_channel_history (8, checkpoint.DeltaHistorian). A group whose
// interface the saver does not implement FAILS, so that a method whose
// signature drifted cannot turn its cases into silent skips; the caller opts
// out of a capability by name with Without (the group is then skipped), and
// Without fails the run when it names something that is not a capability or
// that the saver implements. RunEdge runs the group edge: the kit's own cases
// (nil namespace and global listing, odd thread IDs and namespaces, write
// overwrite rules and order, metadata and value round trips, filters on
// numbers, nested maps and nil, a fork (a copy of a checkpoint put beside
// it), error sentinels, NextVersion order and the legacy pending-sends
// migration). Run runs all three.
//
// # What the kit expects of newSaver
//
//   - It is called once per group, at the start of the group; the cases of
//     a group then run sequentially against that one saver, as the Python
//     harness shares one saver per capability. Every case works on fresh
//     random thread IDs, so none needs an empty store, but the saver must
//     not share data with the savers of other groups or other tests: give
//     each call its own database, key prefix or process (the global listing
//     cases list with ThreadID "" and rely on unique metadata markers only
//     within that saver).
//   - It releases what it opens with t.Cleanup, and calls t.Fatal (or
//     t.Skip, say when a server is unavailable) rather than returning nil.
//   - The saver returned is used from the test goroutine only; the kit does
//     not test concurrency.
//
// # Go mapping of the Python assertions
//
// Python's None from get_tuple is (nil, err) with errors.Is(err,
// checkpoint.ErrNotFound); the kit fails on (nil, nil). A Python config
// always carries checkpoint_ns "", so a Python list call is a ListQuery with
// CheckpointNS checkpoint.NS(""), and alist(None, ...) is ThreadID "". Python
// integer channel versions become strings ("1"), compared as Python does on
// their part before the first '.'. Checkpoint IDs come from checkpoint.NewID,
// thread, task and run IDs are random UUIDs. Metadata, channel and write
// values compare by value: numbers of any Go type are equal when their values
// are (a stored int may come back as int64, 1.0 equals 1), maps and lists
// element by element, and a checkpoint.DeltaSnapshot only equals a snapshot.
// Beyond the Python suite, the kit requires that a tuple's VersionsSeen is
// non-nil when an empty map was put, that List yields tuples equal to what
// GetTuple returns, and the behaviours of the edge group.
package checkpointtest
