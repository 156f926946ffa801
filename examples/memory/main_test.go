package main

import (
	"context"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestRun runs the example end to end on miniredis and on a real Redis.
func TestRun(t *testing.T) {
	_, mini := redistest.Mini(t)
	if err := run(context.Background(), mini); err != nil {
		t.Fatalf("on miniredis: %v", err)
	}
	if err := run(context.Background(), redistest.Real(t)); err != nil {
		t.Fatalf("on Redis: %v", err)
	}
}
