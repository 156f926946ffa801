// Command readme is the Go quickstart of the repository's README: the code
// between the README:begin and README:end comments below is, byte for byte,
// the README's ```go block (readme_test.go checks it), so that the README's
// code compiles and runs.
//
// It uses the Redis named by REDIS_URL (e.g. redis://127.0.0.1:6379/15) or,
// when that is unset, a redis-server it starts from PATH on a free loopback
// port and stops at the end. Its keys live under a prefix of their own.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redisserver"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "readme:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	opt := &redis.Options{}
	if url := os.Getenv("REDIS_URL"); url != "" {
		var err error
		if opt, err = redis.ParseURL(url); err != nil {
			return fmt.Errorf("bad REDIS_URL: %w", err)
		}
	} else {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return fmt.Errorf("REDIS_URL is unset and there is no redis-server on PATH: %w", err)
		}
		srv, err := redisserver.Start(bin, nil)
		if err != nil {
			return err
		}
		defer srv.Stop()
		opt.Addr = srv.Addr()
	}
	// go-redis v9.16 logs a line on every connection to a Redis without
	// maintenance notifications (before 8.2) unless they are off.
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A prefix of this run's own, so that a shared Redis keeps apart the
	// data of every run.
	return quickstart(ctx, rdb, "readme:"+checkpoint.NewID())
}

// README:begin
// quickstart stores two checkpoints of one thread and a task's pending
// writes, then reads the latest back and lists the thread's history.
// rdb is any go-redis client (redis.NewClient, redis.NewClusterClient...);
// the caller owns it. prefix names the application's keys.
func quickstart(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	saver, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix})
	if err != nil {
		return err
	}

	// The input checkpoint of thread user-42: Next fills its ID and bumps
	// the versions of the channels that changed.
	cp, newVersions := checkpoint.Next(checkpoint.Empty(), map[string]any{"messages": []any{"hi"}}, saver.NextVersion)
	first, err := saver.Put(ctx, checkpoint.Root("user-42", ""), cp, checkpoint.Metadata{"step": -1}, newVersions)
	if err != nil {
		return err
	}
	// A task's writes, stored against that checkpoint.
	err = saver.PutWrites(ctx, first, []checkpoint.Write{{Channel: "messages", Value: "hello"}}, "task-1", "")
	if err != nil {
		return err
	}
	// The next super-step: a child of the first checkpoint.
	cp, newVersions = checkpoint.Next(cp, map[string]any{"messages": []any{"hi", "hello"}}, saver.NextVersion)
	if _, err := saver.Put(ctx, checkpoint.Parent(first), cp, checkpoint.Metadata{"step": 0}, newVersions); err != nil {
		return err
	}

	// The latest checkpoint of the thread (checkpoint.ErrNotFound if none).
	latest, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: "user-42"})
	if err != nil {
		return err
	}
	fmt.Println("latest:", latest.Checkpoint.ChannelValues["messages"])

	// The history, newest first; an error ends the listing.
	for tup, err := range saver.List(ctx, checkpoint.ListQuery{ThreadID: "user-42"}) {
		if err != nil {
			return err
		}
		fmt.Printf("step %v: %v, %d pending write(s)\n", tup.Metadata["step"], tup.Checkpoint.ChannelValues["messages"], len(tup.PendingWrites))
	}
	return nil
}

// README:end
