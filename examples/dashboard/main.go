// Command dashboard is a small live dashboard over a redcheck saver: a page
// that lists the threads, shows each thread's checkpoints as a timeline that
// updates live through Server-Sent Events (from package stream), and shows
// the state of a selected checkpoint.
//
//	go run ./examples/dashboard [-addr 127.0.0.1:8080] [-prefix P] [-shards N] [-demo]
//
// It uses the Redis named by REDIS_URL or, when that is unset, an embedded
// miniredis. On miniredis a built-in demo agent (-demo, on by default
// there) writes checkpoints and pending writes to a few "demo-" threads
// every 700 ms; each thread runs a dozen steps, rests, is deleted and starts
// over.
//
// The JSON API the page uses:
//
//	GET /api/threads                                the threads, each with its latest checkpoint
//	GET /api/threads/{thread}/checkpoints           a thread's checkpoints, newest first (?before=ID&limit=N)
//	GET /api/threads/{thread}/checkpoints/{id}?ns=  the state of one checkpoint
//	GET /api/events                                 events as Server-Sent Events (?thread=T, ?from=beginning;
//	                                                a reconnection's Last-Event-ID resumes right after the last event;
//	                                                events Redis no longer holds arrive as a "gap" event, marked in the timeline)
//
// Each open event stream waits for events on a connection of its own
// (package stream opens it from the Redis client's options), so that open
// pages never take connections from the pool the API uses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/graphstate/redcheck/examples/internal/demo"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard: error:", err)
		os.Exit(1)
	}
}

func run() error {
	onMini := os.Getenv("REDIS_URL") == ""
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	prefix := flag.String("prefix", redissaver.DefaultPrefix, "key prefix of the saver to show (Options.Prefix)")
	shards := flag.Int("shards", keys.DefaultShards, "number of shards of the saver (Options.Shards)")
	runDemo := flag.Bool("demo", onMini, "run the demo agent, which writes to threads named demo-* (default: on with the embedded miniredis)")
	every := flag.Duration("every", 700*time.Millisecond, "how often the demo agent acts")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rdb, where, closeConn, err := demo.Connect()
	if err != nil {
		return err
	}
	defer closeConn()
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: demo.Embedded(), Prefix: *prefix, Shards: *shards})
	if err != nil {
		return err
	}
	sub, err := stream.New(rdb, stream.Options{Prefix: *prefix, Shards: *shards})
	if err != nil {
		return err
	}

	if *runDemo {
		agent := newDemoAgent(saver, 12, 5)
		defer func() { // leave nothing behind on a real Redis
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for _, id := range agent.threadIDs() {
				if err := saver.DeleteThread(cctx, id); err != nil {
					log.Printf("dashboard: delete demo thread %s: %v", id, err)
				}
			}
		}()
		agentDone := make(chan struct{})
		go func() {
			defer close(agentDone)
			agent.run(ctx, *every)
		}()
		defer func() { stop(); <-agentDone }()
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           newServer(saver, sub),
		ReadHeaderTimeout: 10 * time.Second,
		// Requests, event streams included, end with ctx.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	fmt.Printf("redcheck dashboard: %s\nserving http://%s/ (Ctrl-C stops)\n", where, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
