// Command observability shows what an operator sees of redcheck through
// OpenTelemetry (docs/observability.md): it installs the OpenTelemetry SDK
// with a Prometheus exporter for metrics and the stdout exporter for spans,
// runs a small agent loop on redissaver (a few threads, each super-step a
// PutWrites and a Put, and a memory in the store, redisstore; a GetTuple
// and a store Search to resume) with a consumer group (stream.Consume)
// indexing the saver's events, lets the leases of two scratch threads run
// out, then prints a scrape of /metrics, the gauges again after a Sweep,
// and a few spans: a Put inside the agent's step, a consumer's handling
// linked to the Put or PutWrites that wrote its event (the event carries
// the writer's trace context), and a store call.
//
// The library imports OpenTelemetry's API only; the SDK and the exporters
// are the application's choice, and this program is where they enter.
//
// It uses the Redis named by REDIS_URL (e.g. redis://127.0.0.1:6379/15) or,
// when that is unset, an embedded miniredis (which reports a stream's
// length as a group's lag). Its keys live under a prefix of their own, and
// it deletes its threads before it exits.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/examples/internal/demo"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/stream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// secret stands for what the agent stores (messages, tool results): it is
// written as channel values and pending writes, and must show in no span
// and no metric.
const secret = "user-secret-7f3a"

// shards is the prefix's shard count: few, for a short print of the lag
// (one series per shard's feed).
const shards = 4

// steps is the number of super-steps of each conversation.
const steps = 3

// threads are the agent's conversations; scratch ones are leased briefly.
var (
	threads = []string{"support-1", "support-2", "support-3"}
	scratch = []string{"scratch-1", "scratch-2"}
)

func main() {
	demo.Main("observability", func(ctx context.Context, rdb *redis.Client) error { return run(ctx, rdb, os.Stdout) })
}

func run(ctx context.Context, rdb *redis.Client, out io.Writer) (err error) {
	// The SDK: a meter provider whose reader is the Prometheus exporter
	// (registered with a registry of our own, served over HTTP below), and
	// a tracer provider writing each span, as JSON, to spans.
	res := resource.NewSchemaless(attribute.String("service.name", "agent-demo"))
	registry := prometheus.NewRegistry()
	// (WithoutScopeInfo keeps the otel_scope_* labels off every series,
	// for a shorter print.)
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		return err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithResource(res))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	var spans bytes.Buffer
	spanExp, err := stdouttrace.New(stdouttrace.WithWriter(&spans))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanExp), sdktrace.WithResource(res))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	// /metrics, as Prometheus would scrape it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(registry, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	metricsURL := "http://" + ln.Addr().String() + "/metrics"

	prefix := "observability:" + checkpoint.NewID()
	saver, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, Shards: shards, AcceptEviction: demo.Embedded(),
		TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		return err
	}
	// The gauges of the prefix's garbage: registered once, unregistered
	// when the saver is no longer used.
	gauges, err := saver.RegisterGauges()
	if err != nil {
		return err
	}
	defer func() { _ = gauges.Unregister() }()
	defer func() {
		for _, th := range threads {
			if derr := saver.DeleteThread(context.Background(), th); derr != nil && err == nil {
				err = fmt.Errorf("delete thread: %w", derr)
			}
		}
	}()

	// A consumer group indexing the saver's events (every shard's feed).
	sub, err := stream.New(rdb, stream.Options{Prefix: prefix, Shards: shards, Block: 100 * time.Millisecond,
		TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		return err
	}
	var indexed atomic.Int64
	cctx, stopConsumer := context.WithCancel(ctx)
	consumed := make(chan error, 1)
	go func() {
		consumed <- sub.Consume(cctx, "indexer", "indexer-1", func(context.Context, stream.Event) error {
			indexed.Add(1)
			return nil
		}, stream.ConsumeOptions{Start: stream.FromBeginning})
	}()
	defer func() {
		stopConsumer()
		if cerr := <-consumed; !errors.Is(cerr, context.Canceled) && err == nil {
			err = fmt.Errorf("consume: %w", cerr)
		}
	}()

	// The agent's long-term memory: a store of its own prefix, reporting
	// to the same providers.
	store, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: prefix + ":store", TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		return err
	}
	defer func() {
		for _, th := range append(threads, scratch...) {
			for step := range steps {
				if derr := store.Delete(context.Background(), []string{"memories", th}, fmt.Sprint("step-", step)); derr != nil && err == nil {
					err = fmt.Errorf("store delete: %w", derr)
				}
			}
		}
	}()

	// The agent loop: each thread runs three super-steps, then resumes
	// from its latest checkpoint, all under a span of the application's.
	tracer := tp.Tracer("agent-demo")
	for _, th := range threads {
		if err := converse(ctx, tracer, saver, store, th, steps); err != nil {
			return err
		}
	}
	// Scratch threads on a saver of the same prefix with a short lease:
	// they expire, and wait for a Sweep.
	leased, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, Shards: shards, AcceptEviction: demo.Embedded(),
		TTL: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	for _, th := range scratch {
		if err := converse(ctx, tracer, leased, store, th, 1); err != nil {
			return err
		}
	}
	time.Sleep(100 * time.Millisecond)
	// A wrong call: a checkpoint without an ID is refused (an error span,
	// refused_writes counts it).
	_, refused := saver.Put(ctx, checkpoint.Config{ThreadID: threads[0]}, checkpoint.Checkpoint{V: 4},
		checkpoint.Metadata{"note": secret}, nil)
	if refused == nil {
		return errors.New("a checkpoint without an ID was stored")
	}
	// Every event handled (the consumer's lag falls to 0 on Redis): one
	// per Put, one per PutWrites.
	events := int64(len(threads)*(2*steps-1) + len(scratch))
	for deadline := time.Now().Add(10 * time.Second); indexed.Load() < events; {
		if time.Now().After(deadline) {
			return fmt.Errorf("the indexer handled %d events", indexed.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	fmt.Fprintf(out, "\n# GET %s (redcheck's series; _bucket lines left out)\n", metricsURL)
	if err := scrape(ctx, metricsURL, out, func(line string) bool { return !strings.Contains(line, "_bucket{") }); err != nil {
		return err
	}
	if demo.Embedded() {
		fmt.Fprintln(out, "# (miniredis reports a stream's length as a group's lag; Redis 7 the entries not yet delivered)")
	}

	units, err := saver.Sweep(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n# Sweep: %d units of work; the gauges again\n", units)
	if err := scrape(ctx, metricsURL, out, func(line string) bool {
		return strings.HasPrefix(line, "redcheck_reclaim_backlog") || strings.HasPrefix(line, "redcheck_threads_expired")
	}); err != nil {
		return err
	}

	fmt.Fprintf(out, "\n# Spans (the stdout exporter's JSON, abridged): a Put inside the agent's step, a consumer's (linked to\n"+
		"# the span that wrote its event), a store call\n")
	return showSpans(&spans, out, "Put", "process indexer", "StorePut")
}

// converse runs steps super-steps of a thread, each saving a memory in the
// store, then resumes it: its latest checkpoint and its memories.
func converse(ctx context.Context, tracer trace.Tracer, saver *redissaver.Saver, store *redisstore.Store, th string, steps int) error {
	cfg := checkpoint.Root(th, "")
	version := ""
	for step := range steps {
		err := func() error {
			ctx, span := tracer.Start(ctx, "agent.step", trace.WithAttributes(attribute.Int("step", step)))
			defer span.End()
			id := checkpoint.NewID()
			if cfg.CheckpointID != "" {
				err := saver.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "messages", Value: secret}}, "task-"+fmt.Sprint(step), "")
				if err != nil {
					return err
				}
			}
			version = saver.NextVersion(version)
			cp := checkpoint.Checkpoint{V: 4, ID: id, TS: time.Now().UTC().Format(time.RFC3339Nano),
				ChannelValues:   map[string]any{"messages": []any{secret, step}},
				ChannelVersions: map[string]string{"messages": version}}
			next, err := saver.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step, "source": "loop"}, map[string]string{"messages": version})
			cfg = next
			if err != nil {
				return err
			}
			return store.Put(ctx, []string{"memories", th}, fmt.Sprint("step-", step), map[string]any{"text": secret, "step": step})
		}()
		if err != nil {
			return fmt.Errorf("%s step %d: %w", th, step, err)
		}
	}
	if _, err := saver.GetTuple(ctx, checkpoint.Root(th, "")); err != nil {
		return err
	}
	_, err := store.Search(ctx, []string{"memories", th}, redisstore.SearchOptions{Limit: 5})
	return err
}

// scrape GETs url and writes the redcheck series (and their HELP and TYPE
// lines) that keep accepts.
func scrape(ctx context.Context, url string, out io.Writer, keep func(string) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name := strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE ")
		if (strings.HasPrefix(name, "redcheck_") || strings.HasPrefix(name, "db_client_") || strings.HasPrefix(name, "messaging_")) && keep(line) {
			fmt.Fprintln(out, line)
		}
	}
	return sc.Err()
}

// showSpans writes the first span of each name given, of those the stdout
// exporter wrote (one JSON object each), with the fields an operator reads,
// and the span each of its links points to.
func showSpans(spans *bytes.Buffer, out io.Writer, names ...string) error {
	type span struct {
		Name        string
		SpanContext struct{ TraceID, SpanID string }
		Parent      struct{ SpanID string }
		SpanKind    int
		Attributes  []struct {
			Key   string
			Value struct{ Value any }
		}
		Links []struct {
			SpanContext struct{ TraceID, SpanID string }
		}
		Status struct{ Code, Description string }
	}
	dec := json.NewDecoder(spans)
	var all []span
	byID := map[string]string{} // span id -> name
	for dec.More() {
		var s span
		if err := dec.Decode(&s); err != nil {
			return err
		}
		all = append(all, s)
		byID[s.SpanContext.SpanID] = s.Name
	}
	shown := map[string]bool{}
	for _, s := range all {
		want := false
		for _, n := range names {
			want = want || (n == s.Name && !shown[n])
		}
		if !want || (s.Name == "Put" && s.Status.Code == "Error") {
			continue
		}
		shown[s.Name] = true
		parent := s.Parent.SpanID
		if strings.Trim(parent, "0") == "" {
			parent = "none (a root span)"
		}
		fmt.Fprintf(out, "%s  kind=%s trace=%s span=%s parent=%s status=%s\n", s.Name, trace.SpanKind(s.SpanKind),
			s.SpanContext.TraceID, s.SpanContext.SpanID, parent, s.Status.Code)
		for _, a := range s.Attributes {
			fmt.Fprintf(out, "    %s = %v\n", a.Key, a.Value.Value)
		}
		for _, l := range s.Links {
			fmt.Fprintf(out, "    link -> %s span (trace=%s span=%s)\n", byID[l.SpanContext.SpanID], l.SpanContext.TraceID, l.SpanContext.SpanID)
		}
	}
	for _, n := range names {
		if !shown[n] {
			return fmt.Errorf("no %q span exported", n)
		}
	}
	return nil
}
