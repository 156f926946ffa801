package stream_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestConsumeLinksToWriter: every event carries the trace context of the
// saver's span that wrote it (Put, PutWrites, CopyThread, Prune,
// DeleteForRuns, DeleteThread), and the span of the consumer's handler
// links to that span; Event.SpanContext names it too. Events of a saver
// whose calls have no span context carry none, and their handler spans have
// no link.
func TestConsumeLinksToWriter(t *testing.T) { forTiers(t, consumeLinksToWriter) }

func consumeLinksToWriter(t *testing.T, rdb redis.UniversalClient) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	traced := newSaver(t, rdb, redissaver.Options{Shards: 1, TracerProvider: tp})
	prefix := keys.Of(traced).Prefix()
	// The same prefix, without tracing (the global no-op provider).
	plain, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: prefix, Shards: 1, AcceptEviction: true})
	must(t, err)

	ctx, root := tp.Tracer("test").Start(context.Background(), "agent step")
	put := func(ctx context.Context, s *redissaver.Saver, th, run string) checkpoint.Config {
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
			ChannelValues: map[string]any{"msgs": "x"}, ChannelVersions: map[string]string{"msgs": "1"}}
		cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: th}, cp, checkpoint.Metadata{"step": 0, "run_id": run}, map[string]string{"msgs": "1"})
		must(t, err)
		return cfg
	}
	cfg := put(ctx, traced, "linked", "run-1")
	must(t, traced.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msgs", Value: "w"}}, "task", ""))
	must(t, traced.CopyThread(ctx, "linked", "copied"))
	put(ctx, traced, "linked", "run-1")
	must(t, traced.Prune(ctx, []string{"linked"}, checkpoint.PruneKeepLatest))
	must(t, traced.DeleteThread(ctx, "copied"))
	must(t, traced.DeleteForRuns(ctx, []string{"run-1"}))
	// No span context in the context, none from the provider: no trace
	// context in the event.
	untraced := put(context.Background(), plain, "plain", "")
	root.End()

	// The writers' spans: the operation each span id names.
	writers := map[trace.SpanID]string{}
	for _, sp := range exp.GetSpans() {
		if sp.Parent.SpanID() == root.SpanContext().SpanID() {
			writers[sp.SpanContext.SpanID()] = sp.Name
		}
	}
	exp.Reset()
	writerOf := map[stream.EventType]string{stream.TypeCheckpoint: "Put", stream.TypeWrites: "PutWrites", stream.TypeThreadCopied: "CopyThread",
		stream.TypePruned: "Prune", stream.TypeRunsDeleted: "DeleteForRuns", stream.TypeThreadDeleted: "DeleteThread"}

	sub, err := stream.New(rdb, stream.Options{Prefix: prefix, Shards: 1, Block: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, TracerProvider: tp})
	must(t, err)
	var mu sync.Mutex
	seen := map[string]stream.Event{} // by entry id
	handlerSpan := map[string]trace.SpanContext{}
	cctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sub.Consume(cctx, "g", "c", func(hctx context.Context, ev stream.Event) error {
			mu.Lock()
			defer mu.Unlock()
			seen[ev.ID] = ev
			handlerSpan[ev.ID] = trace.SpanFromContext(hctx).SpanContext()
			return nil
		}, stream.ConsumeOptions{Start: stream.FromBeginning})
	}()
	total := rdb.XLen(context.Background(), keys.Of(traced).Feed(0)).Val()
	waitFor(t, "every event handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return int64(len(seen)) == total
	})
	cancel()
	<-done

	spans := map[trace.SpanID][]sdktrace.Link{}
	for _, sp := range exp.GetSpans() {
		if sp.Name == "process g" {
			spans[sp.SpanContext.SpanID()] = sp.Links
		}
	}
	linked := map[stream.EventType]int{}
	for id, ev := range seen {
		links, ok := spans[handlerSpan[id].SpanID()]
		if !ok {
			t.Fatalf("event %s (%s): no handler span exported", id, ev.Type)
		}
		if ev.ThreadID == "plain" {
			if ev.TraceParent != "" || ev.SpanContext().IsValid() || len(links) != 0 {
				t.Errorf("untraced event %s: traceparent %q, links %v; want none", ev.CheckpointID, ev.TraceParent, links)
			}
			if ev.CheckpointID != untraced.CheckpointID {
				t.Errorf("untraced event of %s, want %s", ev.CheckpointID, untraced.CheckpointID)
			}
			continue
		}
		sc := ev.SpanContext()
		if !sc.IsValid() || !sc.IsRemote() || sc.TraceID() != root.SpanContext().TraceID() || writers[sc.SpanID()] != writerOf[ev.Type] {
			t.Errorf("%s event %s: Event.SpanContext %v (a span of %q), want a %s span of the agent step's trace",
				ev.Type, id, sc, writers[sc.SpanID()], writerOf[ev.Type])
			continue
		}
		if len(links) != 1 || !links[0].SpanContext.Equal(sc) {
			t.Errorf("%s event %s: handler span links %v, want one to the writer's span %v", ev.Type, id, links, sc)
			continue
		}
		linked[ev.Type]++
	}
	for typ := range writerOf {
		if linked[typ] == 0 {
			t.Errorf("no %s event linked to its writer", typ)
		}
	}
}

// TestSubscribeSpans: each event Subscribe yields is one "receive" span of
// kind consumer, with the event's address, linked to the span that wrote
// it, and lasting until the caller's loop body returns; a counter counts the
// deliveries.
func TestSubscribeSpans(t *testing.T) { forTiers(t, subscribeSpans) }

func subscribeSpans(t *testing.T, rdb redis.UniversalClient) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := newSaver(t, rdb, redissaver.Options{Shards: 1, TracerProvider: tp})
	ctx := context.Background()
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts", ChannelValues: map[string]any{"msgs": "x"}, ChannelVersions: map[string]string{"msgs": "1"}}
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "sub"}, cp, checkpoint.Metadata{"step": 0}, map[string]string{"msgs": "1"}); err != nil {
		t.Fatal(err)
	}
	putSpan := exp.GetSpans()[0]
	exp.Reset()
	sub, err := stream.New(rdb, stream.Options{Prefix: keys.Of(s).Prefix(), Shards: 1, Block: 50 * time.Millisecond, TracerProvider: tp})
	must(t, err)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev, err := range sub.Subscribe(sctx, stream.Query{ThreadID: "sub", From: stream.FromBeginning}) {
		must(t, err)
		if n := len(exp.GetSpans()); n != 0 {
			t.Errorf("%d spans ended before the loop body returned", n)
		}
		if ev.CheckpointID != cp.ID {
			t.Fatalf("event of %s, want %s", ev.CheckpointID, cp.ID)
		}
		break
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want one receive span", len(spans))
	}
	sp := spans[0]
	attrs := map[string]string{}
	for _, kv := range sp.Attributes {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if sp.Name != "receive" || sp.SpanKind != trace.SpanKindConsumer || attrs["messaging.operation.name"] != "receive" ||
		attrs["messaging.system"] != "redis" || attrs["redcheck.thread_id"] != "sub" || attrs["redcheck.checkpoint_id"] != cp.ID ||
		attrs["messaging.destination.name"] != keys.Of(s).Events("sub") {
		t.Errorf("receive span %s, kind %v, attributes %v", sp.Name, sp.SpanKind, attrs)
	}
	if len(sp.Links) != 1 || !sp.Links[0].SpanContext.Equal(putSpan.SpanContext.WithRemote(true)) {
		t.Errorf("receive span links %v, want the Put's span %v", sp.Links, putSpan.SpanContext)
	}
}
