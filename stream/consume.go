package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/redis/go-redis/v9"
)

// Handler handles one event of a consumer group. Returning nil
// acknowledges it; an error (or a panic) leaves it pending, to be claimed
// again after ConsumeOptions.MinIdle.
type Handler func(ctx context.Context, ev Event) error

// DefaultDeadLetterMaxLen is the default ConsumeOptions.DeadLetterMaxLen.
const DefaultDeadLetterMaxLen = 10_000

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
	// DeadLetterMaxLen trims each dead-letter stream to about this many
	// entries (default DefaultDeadLetterMaxLen; Redis trims approximately,
	// in whole macro nodes of 100 entries).
	DeadLetterMaxLen int64
	// OnError is told of every handler error and panic, of malformed
	// entries, of gaps (a *GapError with an Event of TypeGap) and of Redis
	// errors (with a zero Event). May be nil.
	OnError func(Event, error)
}

// ErrHandlerPanic wraps the value of a handler's panic, as reported to
// ConsumeOptions.OnError.
var ErrHandlerPanic = errors.New("stream: handler panicked")

// DeadLetter returns the dead-letter stream of a group for one of the
// streams a consumer reads (its shard's, on the same slot): entries keep
// their fields and gain "dead_from" (the original stream), "dead_id" (the
// original ID) and "dead_deliveries". It is trimmed to about
// ConsumeOptions.DeadLetterMaxLen entries, and follows the TTL of the stream
// it serves (a deleted thread's): set when an entry is buried and at every
// reclaim round while Consume runs.
func (s *Subscriber) DeadLetter(stream, group string) string {
	return stream + ":dead:" + keys.Encode(group)
}

// Consume runs consumer of group until ctx ends, then returns ctx's error.
// It first reads the prefix's meta key, and returns an error wrapping
// checkpoint.ErrInvalidConfig at once when the prefix was written with
// another shard count than Options.Shards (or another storage format).
// It creates the group on every stream it reads when missing. Events are
// handled one at a time, in order within a stream.
//
// When the group or its stream disappears while Consume runs (a restart
// without persistence, a FLUSH, an eviction, a deleted thread's stream
// expiring), Consume creates the group again, at the last entry this
// consumer read from that stream when the stream still holds that entry
// (its ID and its mark, see Gaps), else at "0" (every entry the stream
// holds): the events written since the loss are all handled. It
// reports one *GapError (GapGroupLost) per stream whose group it
// re-created, since the group's pending entries went with it. A group
// that fell behind a trim of its stream (entries it never delivered were
// trimmed away) reports one *GapError (GapTrimmed) when it reads again.
// Pending entries trimmed away before they were handled are reported with
// their IDs (GapPendingTrimmed), from XAUTOCLAIM's list of deleted entries,
// or, on a server that does not give it, from the idle pending entries
// older than the stream's first entry.
//
// While it runs, Consume reports the group's lag on each stream it reads
// (the gauge redcheck.consumer.lag, docs/observability.md) through
// Options.MeterProvider; it unregisters the gauge when it returns.
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
	if opts.DeadLetterMaxLen == 0 {
		opts.DeadLetterMaxLen = DefaultDeadLetterMaxLen
	}
	if opts.MinIdle < time.Millisecond || opts.MaxDeliveries < 1 || opts.DeadLetterMaxLen < 1 {
		return fmt.Errorf("%w: MinIdle, MaxDeliveries and DeadLetterMaxLen must be positive", ErrInvalidOptions)
	}
	if opts.OnError == nil {
		opts.OnError = func(Event, error) {}
	}
	streams, err := s.streams(opts.ThreadID)
	if err != nil {
		return err
	}
	c := &consumer_{s: s, group: group, name: consumer, handler: handler, opts: opts, streams: streams,
		lastSeen: map[string]string{}, lastMark: map[string]string{}, claimFrom: map[string]string{},
		tel: s.tel.consumer(group)}
	for {
		err := s.checkMeta(ctx)
		if errors.Is(err, checkpoint.ErrInvalidConfig) {
			return err
		}
		if err == nil {
			err = c.createGroups(ctx)
		}
		if err == nil {
			break
		} else if ctx.Err() != nil {
			return ctx.Err()
		} else {
			opts.OnError(Event{}, err)
			if !sleep(ctx, s.opts.MaxBackoff) {
				return ctx.Err()
			}
		}
	}
	if reg := c.watchLag(); reg != nil {
		defer func() { _ = reg.Unregister() }()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rdb, release := s.blockingClient(len(readGroups(s.rdb, len(streams))))
	defer release()
	none := make([]string, len(streams))
	batches := s.pump(ctx, rdb, streams, positions{none, slices.Clone(none)},
		reader{block: c.xreadgroup(rdb), check: c.xreadgroupChecked(rdb)})
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
				if isNoGroup(b.err) {
					c.recover(ctx)
					continue
				}
				opts.OnError(Event{}, fmt.Errorf("stream: read group: %w", b.err))
				continue
			}
			c.reportGaps(b.ahead)
			c.handleAll(ctx, b.read)
			c.reportGaps(b.after)
			c.handleAll(ctx, b.res)
		}
	}
}

// consumer_ is one running Consume. Only its goroutine uses it.
type consumer_ struct {
	s       *Subscriber
	group   string
	name    string
	handler Handler
	opts    ConsumeOptions
	streams []string
	// lastSeen is, per stream, the last entry read with XREADGROUP: where a
	// lost group is created again.
	lastSeen map[string]string
	// lastMark is the mark of that entry (markOf): a stream lost and
	// written again can hold another entry under its ID.
	lastMark map[string]string
	// claimFrom is, per stream, where the next XAUTOCLAIM scan goes on.
	claimFrom map[string]string
	// recovered counts the calls of recover: where the group stood before
	// one says nothing of the group created after it. (The reader's
	// goroutine reads it.)
	recovered atomic.Uint64
	tel       *consumerTel
}

// isNoGroup reports a Redis NOGROUP error: the group (or its stream) is
// gone.
func isNoGroup(err error) bool { return redis.HasErrorPrefix(err, "NOGROUP") }

func (c *consumer_) createGroups(ctx context.Context) error {
	start := "$"
	if c.opts.Start == FromBeginning {
		start = "0"
	}
	for _, k := range c.streams {
		err := c.s.rdb.XGroupCreateMkStream(ctx, k, c.group, start).Err()
		if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") {
			return fmt.Errorf("stream: create group %q on %q: %w", c.group, k, err)
		}
	}
	return nil
}

// recover creates the group again on every stream that lost it, and
// reports one gap for each.
func (c *consumer_) recover(ctx context.Context) {
	c.recovered.Add(1)
	for _, k := range c.streams {
		from := c.lastSeen[k]
		// Only the group was lost when the entry last read is still there
		// (its ID, with its mark): the group resumes after it. Otherwise the
		// stream itself was lost (or trimmed past it) and may have been
		// written again since: its new entries can have IDs at or below the
		// last one read (a stream written again in the same millisecond
		// starts at that millisecond), so the group starts from the
		// beginning. At-least-once: an entry may come twice, none is
		// skipped.
		if from != "" {
			got, err := c.s.rdb.XRangeN(ctx, k, from, from, 1).Result()
			if err != nil || len(got) == 0 || markOf(got[0]) != c.lastMark[k] {
				from = ""
			}
		}
		if from == "" {
			from = "0"
		}
		err := c.s.rdb.XGroupCreateMkStream(ctx, k, c.group, from).Err()
		switch {
		case err == nil:
			c.claimFrom[k] = ""
			g := &GapError{Stream: k, Reason: GapGroupLost, From: c.lastSeen[k]}
			c.tel.gap(g)
			c.opts.OnError(gapEvent(g, c.opts.ThreadID, from), g)
		case redis.HasErrorPrefix(err, "BUSYGROUP"):
		case ctx.Err() == nil:
			c.opts.OnError(Event{}, fmt.Errorf("stream: create group %q on %q again: %w", c.group, k, err))
		}
	}
}

func (c *consumer_) xreadgroup(rdb redis.UniversalClient) func(ctx context.Context, streams, _ []string) ([]redis.XStream, error) {
	return func(ctx context.Context, streams, _ []string) ([]redis.XStream, error) {
		args := make([]string, 0, 2*len(streams))
		args = append(args, streams...)
		for range streams {
			args = append(args, ">")
		}
		return rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: c.group, Consumer: c.name, Streams: args, Count: c.s.opts.Count, Block: c.s.opts.Block,
		}).Result()
	}
}

// xreadgroupChecked reads for the group without blocking and, in the same
// MULTI, where the group stood before that read (XINFO GROUPS) and the
// first entry its stream holds. A group whose last delivered entry is older
// than that first entry lagged behind a trim: the entries between were
// never delivered (GapTrimmed, From the group's last delivered entry, To
// the stream's first). After a blocking read that returned entries, the
// group's last delivered entry is already theirs: a trim before that read,
// which the read skipped, shows as a stream that starts past where the
// group stood after the previous checked read; that gap comes ahead of the
// entries read. As with a subscription, a trim that fell exactly after
// that entry is reported too: Redis keeps no trace of trimmed IDs.
func (c *consumer_) xreadgroupChecked(rdb redis.UniversalClient) func(ctx context.Context, streams []string, pre, at positions) ([]redis.XStream, []checked, error) {
	// Where the group stood on each stream after the last checked read
	// (its last delivered entry, the read's own entries included): the
	// position a blocking read that follows starts from, as long as no
	// recover ran since (gen). (Cluster readers share this closure, one
	// per stream.)
	type stood struct {
		id  string
		gen uint64
	}
	var mu sync.Mutex
	groupAt := map[string]stood{}
	return func(ctx context.Context, streams []string, pre, at positions) ([]redis.XStream, []checked, error) {
		gen := c.recovered.Load()
		pipe := rdb.TxPipeline()
		infos := make([]*redis.XInfoGroupsCmd, len(streams))
		firsts := make([]*redis.XMessageSliceCmd, len(streams))
		args := make([]string, 0, 2*len(streams))
		for i, k := range streams {
			infos[i] = pipe.XInfoGroups(ctx, k)
			infos[i].SetFirstKeyPos(2) // the key follows GROUPS: a Cluster routes the MULTI by it
			firsts[i] = pipe.XRangeN(ctx, k, "-", "+", 1)
			args = append(args, k)
		}
		for range streams {
			args = append(args, ">")
		}
		read := pipe.XReadGroup(ctx, &redis.XReadGroupArgs{Group: c.group, Consumer: c.name, Streams: args, Count: c.s.opts.Count, Block: -1})
		_, err := pipe.Exec(ctx)
		mu.Lock()
		defer mu.Unlock()
		if rerr := read.Err(); rerr != nil && !errors.Is(rerr, redis.Nil) {
			if isNoGroup(rerr) {
				for _, k := range streams {
					delete(groupAt, k) // the group is created again, elsewhere
				}
			}
			// Another error (the connection) leaves where the group stood
			// as the last check saw it: the check is tried again from there.
			return nil, nil, rerr // NOGROUP first: Consume creates the group again
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, nil, err
		}
		res, _ := read.Result()
		out := make([]checked, len(streams))
		for i, k := range streams {
			out[i].judged = true
			last := ""
			for _, g := range infos[i].Val() {
				if g.Name == c.group {
					last = g.LastDeliveredID
				}
			}
			first := ""
			if msgs := firsts[i].Val(); len(msgs) > 0 {
				first = msgs[0].ID
			}
			before := groupAt[k]
			if before.gen != gen {
				before.id = ""
			}
			switch {
			case realPosition(last) && first != "" && compareIDs(first, last) > 0:
				out[i].gap = &GapError{Stream: k, Reason: GapTrimmed, From: last, To: first}
			case at.ids[i] != pre.ids[i] && realPosition(before.id) && first != "" && compareIDs(first, before.id) > 0:
				// The blocking read before this check returned entries, and
				// the stream now starts past where the group stood before
				// it: trimmed past entries the group had not delivered,
				// which that read skipped (or past entries another consumer
				// took meanwhile: reported too). It comes ahead of them.
				out[i].gap = &GapError{Stream: k, Reason: GapTrimmed, From: before.id, To: first}
				out[i].ahead = true
			}
			now := stood{last, gen}
			for _, st := range res {
				if n := len(st.Messages); st.Stream == k && n > 0 && compareIDs(st.Messages[n-1].ID, last) > 0 {
					now.id = st.Messages[n-1].ID
				}
			}
			if c.recovered.Load() == gen {
				groupAt[k] = now
			} else {
				delete(groupAt, k) // what this read saw may be the group before a recover
			}
		}
		return res, out, nil
	}
}

// reportGaps reports gaps through OnError.
func (c *consumer_) reportGaps(gs []gapAt) {
	for _, g := range gs {
		c.tel.gap(g.gap)
		c.opts.OnError(gapEvent(g.gap, c.opts.ThreadID, g.resume), g.gap)
	}
}

// handleAll handles the entries of a read, in order within each stream.
func (c *consumer_) handleAll(ctx context.Context, res []redis.XStream) {
	for _, st := range res {
		for _, msg := range st.Messages {
			if compareIDs(msg.ID, c.lastSeen[st.Stream]) > 0 {
				c.lastSeen[st.Stream], c.lastMark[st.Stream] = msg.ID, markOf(msg)
			}
			c.handle(ctx, st.Stream, msg)
		}
	}
}

// handle runs the handler on one entry and acknowledges it on success,
// in a span of its own (the handler's context carries it).
func (c *consumer_) handle(ctx context.Context, stream string, msg redis.XMessage) {
	began := time.Now()
	ev, err := c.s.DecodeEvent(ctx, msg)
	ev.Stream, ev.Cursor = stream, msg.ID
	ctx, span := c.tel.event(ctx, stream, msg.ID, ev.TraceParent, ev.TraceState)
	describe(span, ev)
	decoded := err == nil
	if decoded {
		err = c.call(ctx, ev)
	}
	if err != nil {
		c.tel.done(ctx, span, began, handleKind(err, decoded))
		c.opts.OnError(ev, err)
		return
	}
	if err := c.s.rdb.XAck(ctx, stream, c.group, msg.ID).Err(); err != nil {
		c.tel.done(ctx, span, began, kindAck)
		c.opts.OnError(ev, fmt.Errorf("stream: ack: %w", err))
		return
	}
	c.tel.done(ctx, span, began, "")
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

// reclaim claims, on each stream, up to Count entries other consumers (or
// this one) left unacknowledged for MinIdle (XAUTOCLAIM, a bounded scan
// that goes on where the previous round stopped) and handles them again;
// those delivered MaxDeliveries times already move to the dead-letter
// stream. Pending entries trimmed away are reported as a gap with their
// IDs. It also gives each dead-letter stream its stream's TTL.
func (c *consumer_) reclaim(ctx context.Context) {
	for _, k := range c.streams {
		if ctx.Err() != nil {
			return
		}
		msgs, next, deleted, err := xautoclaim(ctx, c.s.rdb, k, c.group, c.name, c.opts.MinIdle,
			cmp.Or(c.claimFrom[k], "0-0"), c.s.opts.Count)
		if err != nil {
			switch {
			case isNoGroup(err):
				c.recover(ctx)
			case ctx.Err() == nil:
				c.opts.OnError(Event{}, fmt.Errorf("stream: claim: %w", err))
			}
			continue
		}
		c.claimFrom[k] = next
		c.reportTrimmed(k, deleted)
		c.redeliver(ctx, k, msgs)
		c.afterTrim(ctx, k)
	}
}

// reportTrimmed reports pending entries that were trimmed away.
func (c *consumer_) reportTrimmed(stream string, lost []string) {
	if len(lost) > 0 {
		g := &GapError{Stream: stream, Reason: GapPendingTrimmed, Lost: lost}
		c.tel.gap(g)
		c.opts.OnError(gapEvent(g, c.opts.ThreadID, lost[len(lost)-1]), g)
	}
}

// redeliver handles claimed entries again, or buries those delivered
// MaxDeliveries times already (their count, read with XPENDING, now
// includes this claim).
func (c *consumer_) redeliver(ctx context.Context, stream string, msgs []redis.XMessage) {
	if len(msgs) == 0 {
		return
	}
	pipe := c.s.rdb.Pipeline()
	counts := make([]*redis.XPendingExtCmd, len(msgs))
	for i, m := range msgs {
		counts[i] = pipe.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: c.group, Start: m.ID, End: m.ID, Count: 1})
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		c.opts.OnError(Event{}, fmt.Errorf("stream: pending: %w", err))
		return
	}
	for i, m := range msgs {
		p, err := counts[i].Result()
		if err != nil || len(p) != 1 {
			continue // acknowledged meanwhile
		}
		if p[0].RetryCount > c.opts.MaxDeliveries {
			c.bury(ctx, stream, m, p[0].RetryCount-1)
			continue
		}
		c.tel.redelivered(ctx)
		c.handle(ctx, stream, m)
	}
}

// afterTrim acknowledges and reports the idle pending entries older than
// the stream's first entry (all of them when it is empty or gone): a
// server whose XAUTOCLAIM does not list deleted entries leaves them
// pending forever. Then it gives the dead-letter stream the stream's TTL.
func (c *consumer_) afterTrim(ctx context.Context, stream string) {
	dead := c.s.DeadLetter(stream, c.group)
	pipe := c.s.rdb.Pipeline()
	first := pipe.XRangeN(ctx, stream, "-", "+", 1)
	ttl, deadTTL := pipe.PTTL(ctx, stream), pipe.PTTL(ctx, dead)
	if _, err := pipe.Exec(ctx); err != nil {
		if ctx.Err() == nil {
			c.opts.OnError(Event{}, fmt.Errorf("stream: pending: %w", err))
		}
		return
	}
	c.followTTL(ctx, dead, ttl.Val(), deadTTL.Val())
	end := "+"
	if msgs := first.Val(); len(msgs) > 0 {
		end = msgs[0].ID
	}
	pending, err := c.s.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: stream, Group: c.group, Idle: c.opts.MinIdle, Start: "-", End: end, Count: c.s.opts.Count,
	}).Result()
	if err != nil {
		if isNoGroup(err) {
			c.recover(ctx)
		} else if ctx.Err() == nil && !errors.Is(err, redis.Nil) {
			c.opts.OnError(Event{}, fmt.Errorf("stream: pending: %w", err))
		}
		return
	}
	var lost []string
	for _, p := range pending {
		if p.ID != end {
			lost = append(lost, p.ID)
		}
	}
	if len(lost) == 0 {
		return
	}
	if err := c.s.rdb.XAck(ctx, stream, c.group, lost...).Err(); err != nil {
		c.opts.OnError(Event{}, fmt.Errorf("stream: ack lost entries: %w", err))
		return
	}
	c.reportTrimmed(stream, lost)
}

// followTTL gives the dead-letter stream its stream's TTL: the same expiry
// when the stream expires, none when it does not; a stream that is gone
// leaves the dead-letter stream with the TTL it last followed.
func (c *consumer_) followTTL(ctx context.Context, dead string, ttl, deadTTL time.Duration) {
	switch {
	case deadTTL == -2 || ttl == -2: // no dead-letter stream, or the stream is gone
	case ttl > 0 && (deadTTL < 0 || deadTTL > ttl || ttl-deadTTL > time.Second):
		c.s.rdb.PExpire(ctx, dead, ttl)
	case ttl == -1 && deadTTL >= 0:
		c.s.rdb.Persist(ctx, dead)
	}
}

// bury moves an entry to the dead-letter stream, trimmed to
// DeadLetterMaxLen, and acknowledges it, in one transaction (both keys
// share the stream's slot); then gives the dead-letter stream the stream's
// TTL.
func (c *consumer_) bury(ctx context.Context, stream string, msg redis.XMessage, deliveries int64) {
	dead := c.s.DeadLetter(stream, c.group)
	values := map[string]any{"dead_from": stream, "dead_id": msg.ID, "dead_deliveries": deliveries}
	for k, v := range msg.Values {
		values[k] = v
	}
	var ttl, deadTTL *redis.DurationCmd
	_, err := c.s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: dead, MaxLen: c.opts.DeadLetterMaxLen, Approx: true, Values: values})
		pipe.XAck(ctx, stream, c.group, msg.ID)
		ttl, deadTTL = pipe.PTTL(ctx, stream), pipe.PTTL(ctx, dead)
		return nil
	})
	if err != nil {
		c.opts.OnError(Event{}, fmt.Errorf("stream: dead letter: %w", err))
		return
	}
	c.tel.dead(ctx, stream, msg.ID, dead)
	c.followTTL(ctx, dead, ttl.Val(), deadTTL.Val())
}
