package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

func Example() {
	mr, err := miniredis.Run() // an in-process Redis; any Redis 7+ works the same
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: "myapp"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// Store the first checkpoint of a thread: a root, so the Config given
	// to Put names no parent.
	version := saver.NextVersion("")
	cp := checkpoint.Checkpoint{
		V:               4,
		ID:              checkpoint.NewID(),
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: map[string]string{"messages": version},
	}
	md := checkpoint.Metadata{"source": "input", "step": -1}
	cfg, err := saver.Put(ctx, checkpoint.Config{ThreadID: "thread-1"}, cp, md, map[string]string{"messages": version})
	if err != nil {
		log.Fatal(err)
	}

	// A task of the next step wrote to "messages".
	writes := []checkpoint.Write{{Channel: "messages", Value: "hi, how can I help?"}}
	if err := saver.PutWrites(ctx, cfg, writes, "task-1", "agent"); err != nil {
		log.Fatal(err)
	}

	// Read the latest checkpoint of the thread back.
	tup, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: "thread-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same ID:", tup.Config.CheckpointID == cp.ID, "parent:", tup.ParentConfig)
	fmt.Println("messages:", tup.Checkpoint.ChannelValues["messages"])
	fmt.Printf("metadata: source=%v step=%v (%T)\n", tup.Metadata["source"], tup.Metadata["step"], tup.Metadata["step"])
	for _, w := range tup.PendingWrites {
		fmt.Printf("pending write: task %s, %s = %q\n", w.TaskID, w.Channel, w.Value)
	}

	// A thread without checkpoints gives ErrNotFound.
	_, err = saver.GetTuple(ctx, checkpoint.Config{ThreadID: "thread-2"})
	fmt.Println("thread-2 not found:", errors.Is(err, checkpoint.ErrNotFound))
	// Output:
	// same ID: true parent: <nil>
	// messages: [hello]
	// metadata: source=input step=-1 (int64)
	// pending write: task task-1, messages = "hi, how can I help?"
	// thread-2 not found: true
}

func ExampleSaver_List() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// Six steps, each a child of the one before; alice drove the even ones
	// and bob the odd ones.
	cfg := checkpoint.Config{ThreadID: "thread-1"}
	version := ""
	for step := range 6 {
		version = saver.NextVersion(version)
		cp := checkpoint.Checkpoint{
			V:               4,
			ID:              checkpoint.NewID(),
			ChannelValues:   map[string]any{"count": step},
			ChannelVersions: map[string]string{"count": version},
		}
		md := checkpoint.Metadata{"source": "loop", "step": step, "user": []string{"alice", "bob"}[step%2]}
		if cfg, err = saver.Put(ctx, cfg, cp, md, map[string]string{"count": version}); err != nil {
			log.Fatal(err)
		}
	}

	// The two latest checkpoints of alice's, newest first.
	q := checkpoint.ListQuery{
		ThreadID: "thread-1",
		Filter:   checkpoint.Metadata{"user": "alice"},
		Limit:    2,
	}
	for tup, err := range saver.List(ctx, q) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("step", tup.Metadata["step"], "user", tup.Metadata["user"], "count", tup.Checkpoint.ChannelValues["count"])
	}
	// Output:
	// step 4 user alice count 4
	// step 2 user alice count 2
}

func ExampleSaver_DeltaChannelHistory() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// "log" is a delta channel: step 0 stores a snapshot of its value; the
	// later steps give it a new version but store no value, only the writes
	// that extend it.
	cfg := checkpoint.Config{ThreadID: "thread-1"}
	version := ""
	for step := range 4 {
		version = saver.NextVersion(version)
		values := map[string]any{}
		if step == 0 {
			values["log"] = checkpoint.DeltaSnapshot{Value: []any{"start"}}
		}
		cp := checkpoint.Checkpoint{
			V:               4,
			ID:              checkpoint.NewID(),
			ChannelValues:   values,
			ChannelVersions: map[string]string{"log": version},
		}
		if cfg, err = saver.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step}, map[string]string{"log": version}); err != nil {
			log.Fatal(err)
		}
		w := checkpoint.Write{Channel: "log", Value: fmt.Sprintf("entry %d", step)}
		if err := saver.PutWrites(ctx, cfg, []checkpoint.Write{w}, fmt.Sprintf("task-%d", step), "worker"); err != nil {
			log.Fatal(err)
		}
	}

	// The value of "log" at the last checkpoint (step 3) is the seed, then
	// the writes from the seed's checkpoint down to step 3's parent.
	hist, err := saver.DeltaChannelHistory(ctx, cfg, []string{"log"})
	if err != nil {
		log.Fatal(err)
	}
	h := hist["log"]
	fmt.Printf("seed: %v %#v\n", h.HasSeed, h.Seed)
	for _, w := range h.Writes {
		fmt.Println("write:", w.TaskID, w.Value)
	}
	// Output:
	// seed: true checkpoint.DeltaSnapshot{Value:[]interface {}{"start"}}
	// write: task-0 entry 0
	// write: task-1 entry 1
	// write: task-2 entry 2
}

func ExampleSaver_CopyThread() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// Three steps on "source", then a pending write on the last one.
	var ids []string
	cfg := checkpoint.Config{ThreadID: "source"}
	version := ""
	for step := range 3 {
		version = saver.NextVersion(version)
		cp := checkpoint.Checkpoint{
			V:               4,
			ID:              checkpoint.NewID(),
			ChannelValues:   map[string]any{"count": step},
			ChannelVersions: map[string]string{"count": version},
		}
		if cfg, err = saver.Put(ctx, cfg, cp, checkpoint.Metadata{"step": step}, map[string]string{"count": version}); err != nil {
			log.Fatal(err)
		}
		ids = append(ids, cfg.CheckpointID)
	}
	if err := saver.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "count", Value: 3}}, "task-1", "counter"); err != nil {
		log.Fatal(err)
	}

	if err := saver.CopyThread(ctx, "source", "target"); err != nil {
		log.Fatal(err)
	}
	count := func(thread string) int {
		n := 0
		for _, err := range saver.List(ctx, checkpoint.ListQuery{ThreadID: thread}) {
			if err != nil {
				log.Fatal(err)
			}
			n++
		}
		return n
	}
	fmt.Println("checkpoints: source", count("source"), "target", count("target"))

	// The copy keeps IDs, parent links, values and pending writes.
	tup, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: "target"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same latest ID:", tup.Config.CheckpointID == ids[2])
	fmt.Println("parent is step 1:", tup.ParentConfig.CheckpointID == ids[1])
	fmt.Println("count:", tup.Checkpoint.ChannelValues["count"], "pending writes:", len(tup.PendingWrites))

	// Copying onto a thread that has checkpoints is refused.
	err = saver.CopyThread(ctx, "source", "target")
	fmt.Println("copy again refused:", errors.Is(err, checkpoint.ErrInvalidConfig))
	// Output:
	// checkpoints: source 3 target 3
	// same latest ID: true
	// parent is step 1: true
	// count: 2 pending writes: 1
	// copy again refused: true
}
