// Package testctx gives a test a context that ends with it, as
// testing.T.Context does from Go 1.24 on: the module's floor is Go 1.23,
// which lacks it.
package testctx

import (
	"context"
	"testing"
)

// Context returns a context canceled when tb's test ends. Unlike
// testing.T.Context, whose context is canceled before any cleanup runs, it
// is canceled by a cleanup of its own, so that cleanups registered after the
// call still see it live: a cleanup must not wait for a goroutine that only
// ends when this context does.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	return ctx
}
