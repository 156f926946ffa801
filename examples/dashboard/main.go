// Command dashboard runs the redcheck UI (the one "redcheck ui" serves,
// package internal/ui) next to a demo agent, so that there is something to
// watch without an agent of your own:
//
//	go run ./examples/dashboard [-addr 127.0.0.1:8080] [-prefix P] [-shards N] [-demo] [-allow-writes]
//
// It uses the Redis named by REDIS_URL or, when that is unset, an embedded
// miniredis. On miniredis a built-in demo agent (-demo, on by default
// there) writes checkpoints and pending writes to a few "demo-" threads
// every 700 ms; each thread runs a dozen steps, rests (one of them waiting
// on an interrupt, so the inbox has an entry), is deleted and starts over.
// Against your own Redis, "redcheck ui" is the command to use.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/graphstate/redcheck/examples/internal/demo"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/ui"
	"github.com/graphstate/redcheck/redissaver"
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
	allowWrites := flag.Bool("allow-writes", false, "let the UI fork, delete and prune threads")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rdb, where, closeConn, err := demo.Connect()
	if err != nil {
		return err
	}
	defer closeConn()
	handler, err := ui.New(rdb, ui.Options{Prefix: *prefix, Shards: *shards, AllowWrites: *allowWrites})
	if err != nil {
		return err
	}

	// Unlike "redcheck ui", which never writes without --allow-writes, the
	// example creates the prefix when it has none (redissaver.New does), so
	// that the page is live before an agent's first write.
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: demo.Embedded(), Prefix: *prefix, Shards: *shards})
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
	fmt.Printf("redcheck dashboard: %s\nserving http://%s/ (Ctrl-C stops)\n", where, ln.Addr())
	return handler.Serve(ctx, ln)
}
