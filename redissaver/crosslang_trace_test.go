package redissaver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/stream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// xTraced is what js/test/crosslang.test.ts put under the OpenTelemetry
// SDK: a checkpoint, on a prefix of its own, and the W3C trace context
// of the TypeScript span that put it.
type xTraced struct {
	Prefix      string `json:"prefix"`
	Shards      int    `json:"shards"`
	Thread      string `json:"thread"`
	ID          string `json:"id"`
	Traceparent string `json:"traceparent"`
}

// TestCrossLangTraceLink: a Go consumer's span of the event of a
// checkpoint a TypeScript put wrote links to that put's span.
func TestCrossLangTraceLink(t *testing.T) {
	dir := crossDir(t)
	var doc struct {
		Traced *xTraced `json:"traced"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "js_written.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Traced == nil {
		t.Fatal("js_written.json has no traced checkpoint")
	}
	want := doc.Traced
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	rdb := redistest.Real(t)
	sub, err := stream.New(rdb, stream.Options{Prefix: want.Prefix, Shards: want.Shards, Block: 50 * time.Millisecond, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got stream.Event
	var handler trace.SpanContext
	err = sub.Consume(ctx, "xl", "go", func(hctx context.Context, ev stream.Event) error {
		if ev.ThreadID == want.Thread && ev.CheckpointID == want.ID {
			got, handler = ev, trace.SpanContextFromContext(hctx)
			cancel()
		}
		return nil
	}, stream.ConsumeOptions{Start: stream.FromBeginning})
	if got.CheckpointID == "" {
		t.Fatalf("the traced checkpoint's event was not consumed: %v", err)
	}
	if got.TraceParent != want.Traceparent {
		t.Fatalf("the event's traceparent %q, want the TypeScript span's %q", got.TraceParent, want.Traceparent)
	}
	for _, sp := range exp.GetSpans() {
		if sp.SpanContext.SpanID() != handler.SpanID() {
			continue
		}
		if len(sp.Links) != 1 || !sp.Links[0].SpanContext.Equal(got.SpanContext()) || !got.SpanContext().IsValid() {
			t.Fatalf("the handler's span links %v, want one to %s", sp.Links, want.Traceparent)
		}
		t.Logf("a Go consumer's span links to the TypeScript put's span %s", want.Traceparent)
		return
	}
	t.Fatal("the handler's span was not exported")
}
