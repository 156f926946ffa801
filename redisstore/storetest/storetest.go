package storetest

import (
	"testing"
	"time"

	"github.com/graphstate/redcheck/redisstore"
)

// Env is what the kit needs from the store under test.
type Env struct {
	// New returns a store with opts (Prefix aside) on fresh, isolated
	// storage. It releases what it opens with t.Cleanup and calls t.Fatal
	// rather than returning nil.
	New func(t *testing.T, opts redisstore.Options) *redisstore.Store

	// Advance moves the server's clock forward by d; see the package doc.
	// Nil skips the TTL cases.
	Advance func(t *testing.T, d time.Duration)

	// Unit is the time unit of the TTL cases (default 250ms).
	Unit time.Duration
}

type testCase struct {
	name string
	fn   func(t *testing.T, e Env)
}

// Run runs every group of the kit: basic, search, filter,
// list_namespaces, batch, ttl, vector and contract.
func Run(t *testing.T, e Env) {
	t.Helper()
	if e.New == nil {
		t.Fatal("storetest: Env.New is nil")
	}
	if e.Unit <= 0 {
		e.Unit = 250 * time.Millisecond
	}
	group(t, e, "basic", basicCases)
	group(t, e, "search", searchCases)
	group(t, e, "filter", filterCases)
	group(t, e, "list_namespaces", listCases)
	group(t, e, "batch", batchCases)
	group(t, e, "ttl", ttlCases)
	group(t, e, "vector", vectorCases)
	group(t, e, "contract", contractCases)
}

func group(t *testing.T, e Env, name string, cases []testCase) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { c.fn(t, e) })
		}
	})
}
