package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/graphstate/redcheck/keys"
	"github.com/redis/go-redis/v9"
)

// Handler handles one event of a consumer group. Returning nil
// acknowledges it; an error (or a panic) leaves it pending, to be claimed
// again after ConsumeOptions.MinIdle.
type Handler func(ctx context.Context, ev Event) error

// ConsumeOptions configure Subscriber.Consume.
type ConsumeOptions struct {
	// ThreadID consumes one thread's stream; "" consumes every shard's feed.
	ThreadID string
	// Start is where a group that does not exist yet starts: "" for events
	// appended after its creation, FromBeginning for every event Redis holds.
	Start string
	// MinIdle is how long an event stays unacknowledged before another
	// consumer claims it (default 30s).
	MinIdle time.Duration
	// MaxDeliveries is how many times an event is delivered before it moves
	// to the dead-letter stream (default 5).
	MaxDeliveries int64
	// OnError is told of every handler error and panic, of malformed
	// entries, and of Redis errors (with a zero Event). May be nil.
	OnError func(Event, error)
}

// ErrHandlerPanic wraps the value of a handler's panic, as reported to
// ConsumeOptions.OnError.
var ErrHandlerPanic = errors.New("stream: handler panicked")

// DeadLetter returns the dead-letter stream of a group for one of the
// streams a consumer reads (its shard's, on the same slot): entries keep
// their fields and gain "dead_from" (the original stream), "dead_id" (the
// original ID) and "dead_deliveries".
func (s *Subscriber) DeadLetter(stream, group string) string {
	return stream + ":dead:" + keys.Encode(group)
}

// Consume runs consumer of group until ctx ends, then returns ctx's error.
// It creates the group on every stream it reads when missing. Events are
// handled one at a time, in order within a stream.
func (s *Subscriber) Consume(ctx context.Context, group, consumer string, handler Handler, opts ConsumeOptions) error {
	if group == "" || consumer == "" || handler == nil {
		return fmt.Errorf("%w: Consume needs a group, a consumer and a handler", ErrInvalidOptions)
	}
	if opts.MinIdle == 0 {
		opts.MinIdle = 30 * time.Second
	}
	if opts.MaxDeliveries == 0 {
		opts.MaxDeliveries = 5
	}
	if opts.MinIdle < time.Millisecond || opts.MaxDeliveries < 1 {
		return fmt.Errorf("%w: MinIdle and MaxDeliveries must be positive", ErrInvalidOptions)
	}
	if opts.OnError == nil {
		opts.OnError = func(Event, error) {}
	}
	streams, err := s.streams(opts.ThreadID)
	if err != nil {
		return err
	}
	c := &consumer_{s: s, group: group, name: consumer, handler: handler, opts: opts, streams: streams}
	for {
		if err := c.createGroups(ctx); err == nil {
			break
		} else if ctx.Err() != nil {
			return ctx.Err()
		} else {
			opts.OnError(Event{}, err)
			sleep(ctx, s.opts.MaxBackoff)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ids := make([]string, len(streams))
	batches := s.pump(ctx, streams, ids, c.xreadgroup)
	reclaim := time.NewTicker(max(opts.MinIdle/4, 10*time.Millisecond))
	defer reclaim.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-reclaim.C:
			c.reclaim(ctx)
		case b, ok := <-batches:
			if !ok {
				return ctx.Err()
			}
			if b.err != nil {
				opts.OnError(Event{}, fmt.Errorf("stream: read group: %w", b.err))
				continue
			}
			for _, st := range b.res {
				for _, msg := range st.Messages {
					c.handle(ctx, st.Stream, msg)
				}
			}
		}
	}
}

// consumer_ is one running Consume.
type consumer_ struct {
	s       *Subscriber
	group   string
	name    string
	handler Handler
	opts    ConsumeOptions
	streams []string
}

func (c *consumer_) createGroups(ctx context.Context) error {
	start := "$"
	if c.opts.Start == FromBeginning {
		start = "0"
	}
	for _, k := range c.streams {
		err := c.s.rdb.XGroupCreateMkStream(ctx, k, c.group, start).Err()
		if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return fmt.Errorf("stream: create group %q on %q: %w", c.group, k, err)
		}
	}
	return nil
}

func (c *consumer_) xreadgroup(ctx context.Context, streams, _ []string) ([]redis.XStream, error) {
	args := make([]string, 0, 2*len(streams))
	args = append(args, streams...)
	for range streams {
		args = append(args, ">")
	}
	return c.s.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: c.group, Consumer: c.name, Streams: args, Count: c.s.opts.Count, Block: c.s.opts.Block,
	}).Result()
}

// handle runs the handler on one entry and acknowledges it on success.
func (c *consumer_) handle(ctx context.Context, stream string, msg redis.XMessage) {
	ev, err := DecodeEvent(msg, c.s.opts.Serializer)
	ev.Stream, ev.Cursor = stream, msg.ID
	if err == nil {
		err = c.call(ctx, ev)
	}
	if err != nil {
		c.opts.OnError(ev, err)
		return
	}
	if err := c.s.rdb.XAck(ctx, stream, c.group, msg.ID).Err(); err != nil {
		c.opts.OnError(ev, fmt.Errorf("stream: ack: %w", err))
	}
}

// call runs the handler, turning a panic into an error.
func (c *consumer_) call(ctx context.Context, ev Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrHandlerPanic, r)
		}
	}()
	return c.handler(ctx, ev)
}

// reclaim claims the entries other consumers (or this one) left
// unacknowledged for MinIdle and handles them again; those delivered
// MaxDeliveries times already move to the dead-letter stream.
func (c *consumer_) reclaim(ctx context.Context) {
	for _, k := range c.streams {
		pending, err := c.s.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: k, Group: c.group, Idle: c.opts.MinIdle, Start: "-", End: "+", Count: c.s.opts.Count,
		}).Result()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, redis.Nil) {
				c.opts.OnError(Event{}, fmt.Errorf("stream: pending: %w", err))
			}
			continue
		}
		var retry []string
		for _, p := range pending {
			if p.RetryCount >= c.opts.MaxDeliveries {
				c.bury(ctx, k, p)
				continue
			}
			retry = append(retry, p.ID)
		}
		if len(retry) == 0 {
			continue
		}
		msgs, err := c.s.rdb.XClaim(ctx, &redis.XClaimArgs{
			Stream: k, Group: c.group, Consumer: c.name, MinIdle: c.opts.MinIdle, Messages: retry,
		}).Result()
		if err != nil {
			c.opts.OnError(Event{}, fmt.Errorf("stream: claim: %w", err))
			continue
		}
		for _, msg := range msgs {
			c.handle(ctx, k, msg)
		}
	}
}

// bury moves an entry to the dead-letter stream and acknowledges it, in one
// transaction (both keys share the stream's slot).
func (c *consumer_) bury(ctx context.Context, stream string, p redis.XPendingExt) {
	msgs, err := c.s.rdb.XRangeN(ctx, stream, p.ID, p.ID, 1).Result()
	if err != nil {
		c.opts.OnError(Event{}, fmt.Errorf("stream: dead letter: %w", err))
		return
	}
	dead := c.s.DeadLetter(stream, c.group)
	_, err = c.s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if len(msgs) == 1 { // trimmed away meanwhile: just acknowledge
			values := map[string]any{"dead_from": stream, "dead_id": p.ID, "dead_deliveries": p.RetryCount}
			for k, v := range msgs[0].Values {
				values[k] = v
			}
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: dead, Values: values})
		}
		pipe.XAck(ctx, stream, c.group, p.ID)
		return nil
	})
	if err != nil {
		c.opts.OnError(Event{}, fmt.Errorf("stream: dead letter: %w", err))
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
