package stream_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// A subscription resumed from a cursor that Redis has trimmed away is told
// of the gap, then goes on with the events Redis still holds.
func ExampleGapError() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	saver, _ := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: "example", Shards: 1})
	sub, _ := stream.New(rdb, stream.Options{Prefix: "example", Shards: 1})

	cfg := checkpoint.Config{ThreadID: "chat"}
	cfg, _ = saver.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, checkpoint.Metadata{"step": 0}, nil)
	cursor, _ := sub.Position(ctx, "chat") // a subscriber stopped here...
	for step := 1; step <= 4; step++ {
		cfg, _ = saver.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, checkpoint.Metadata{"step": step}, nil)
	}
	rdb.XTrimMaxLen(ctx, keys.Of(saver).Events("chat"), 2) // ...and Redis trimmed the stream meanwhile

	n := 0
	for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: "chat", From: cursor}) {
		var gap *stream.GapError
		switch {
		case errors.As(err, &gap):
			fmt.Println(ev.Type, gap.Reason, errors.Is(err, stream.ErrGap))
		case err != nil:
			fmt.Println("error:", err)
		default:
			fmt.Println(ev.Type, "step", ev.Step)
		}
		if n++; n == 3 {
			break
		}
	}
	// Output:
	// gap trimmed true
	// checkpoint step 3
	// checkpoint step 4
}
