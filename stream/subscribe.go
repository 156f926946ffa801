package stream

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/redis/go-redis/v9"
)

// Query selects the events of a subscription.
type Query struct {
	// ThreadID follows one thread; "" follows every thread.
	ThreadID string
	// CheckpointNS, when non-nil, keeps only events of that namespace
	// (events that concern a whole thread, such as thread_deleted, have the
	// namespace "" and pass only a filter on "").
	CheckpointNS *string
	// From is where to start: "" for events after the subscription starts,
	// FromBeginning for the oldest event Redis holds, or an Event.Cursor of
	// an earlier subscription with the same ThreadID (or Position's) to
	// resume right after that event. Any other From is refused with
	// ErrInvalidQuery (see CheckQuery).
	From string
	// Since, when From is "" and Since is not zero, starts at the first
	// event appended at or after Since. Events appended since then that
	// Redis trimmed are reported as a gap (see Gaps in the package
	// documentation).
	Since time.Time
}

// Subscribe yields the events q selects as they arrive, blocking between
// them, until ctx ends or the caller stops ranging. Errors are yielded with
// a zero Event (a malformed entry, with its ID and Cursor set); after a Redis
// error the subscription backs off, reconnects and resumes after the last
// event it yielded, when the caller ranges on.
//
// A gap (events past the subscription's position that Redis no longer
// holds) is yielded as an Event of TypeGap with a *GapError (errors.Is
// ErrGap), after the events that precede it and before the events that
// follow it; no Cursor skips an event not yet yielded (see Gaps in the
// package documentation). Blocking reads use a connection of their own (see
// Options.BlockingClient).
//
// Before its first read, Subscribe reads the prefix's meta key: when the
// prefix was written with another shard count than Options.Shards (or
// another storage format), it yields one error wrapping
// checkpoint.ErrInvalidConfig and ends, rather than read streams no saver
// writes.
func (s *Subscriber) Subscribe(ctx context.Context, q Query) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		streams, err := s.streams(q.ThreadID)
		if err != nil {
			yield(Event{}, err)
			return
		}
		at, err := s.begin(ctx, q, streams)
		for err != nil {
			if errors.Is(err, checkpoint.ErrInvalidConfig) || errors.Is(err, ErrInvalidQuery) {
				yield(Event{}, err)
				return
			}
			if ctx.Err() != nil || !yield(Event{}, err) || !sleep(ctx, s.opts.MaxBackoff) {
				return
			}
			at, err = s.begin(ctx, q, streams)
		}
		ids, marks := at.ids, at.marks
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rdb, release := s.blockingClient(len(readGroups(s.rdb, len(streams))))
		defer release()
		index := make(map[string]int, len(streams))
		for i, k := range streams {
			index[k] = i
		}
		// Each event's Cursor: the positions after it, with their marks.
		deliver := func(res []redis.XStream) bool {
			for _, st := range res {
				i, ok := index[st.Stream]
				if !ok {
					continue
				}
				for _, msg := range st.Messages {
					ids[i], marks[i] = msg.ID, markOf(msg)
					ev, err := s.DecodeEvent(ctx, msg)
					ev.Stream, ev.Cursor = st.Stream, cursorOf(ids, marks)
					if err == nil && q.CheckpointNS != nil && ev.CheckpointNS != *q.CheckpointNS {
						continue
					}
					span := s.tel.delivery(ctx, st.Stream, ev, err)
					more := yield(ev, err)
					span.End()
					if !more {
						return false
					}
				}
			}
			return true
		}
		// Each gap's Cursor: the position a subscription resumed from it
		// reads after.
		gaps := func(gs []gapAt) bool {
			for _, g := range gs {
				i := index[g.gap.Stream]
				ids[i], marks[i] = g.resume, g.mark
				s.tel.gapSpan(ctx, g.gap, "")
				if !yield(gapEvent(g.gap, q.ThreadID, cursorOf(ids, marks)), g.gap) {
					return false
				}
			}
			return true
		}
		r := reader{block: s.xread(rdb), check: s.xreadChecked(rdb)}
		for b := range s.pump(ctx, rdb, streams, at.clone(), r) {
			if b.err != nil {
				if !yield(Event{}, fmt.Errorf("stream: read: %w", b.err)) {
					return
				}
				continue
			}
			for _, err := range b.unknown {
				if !yield(Event{}, err) {
					return
				}
			}
			if !gaps(b.ahead) || !deliver(b.read) || !gaps(b.after) || !deliver(b.res) {
				return
			}
		}
	}
}

// begin checks the query and the prefix's meta key, then finds where the
// subscription starts.
func (s *Subscriber) begin(ctx context.Context, q Query, streams []string) (positions, error) {
	if err := s.CheckQuery(q); err != nil {
		return positions{}, err
	}
	if err := s.checkMeta(ctx); err != nil {
		return positions{}, err
	}
	return s.start(ctx, q, streams)
}

// CheckQuery returns an error when q can never be read: one wrapping
// checkpoint.ErrInvalidConfig for a ThreadID no saver accepts, one wrapping
// ErrInvalidQuery when its From is neither "", FromBeginning nor a cursor
// of the streams q reads (say, an every-thread cursor given to a one-thread
// query, or the reverse, or a cursor of another shard count). Subscribe
// checks it too, before its first read, and then yields the error once and
// ends; CheckQuery lets a caller refuse such a query up front (an HTTP
// handler, say).
func (s *Subscriber) CheckQuery(q Query) error {
	streams, err := s.streams(q.ThreadID)
	if err != nil || q.From == "" {
		return err
	}
	_, _, err = parseCursor(q.From, len(streams))
	return err
}

// Position returns the current end of the events of a thread ("" for every
// thread), as a cursor for Query.From: read some state, then subscribe from
// the position taken before, and no event written in between is missed.
// A stream that holds no event yet gives its start ("0-0"), which claims
// none (see Gaps in the package documentation): events written to it and
// trimmed away before the subscription reads them are not reported.
func (s *Subscriber) Position(ctx context.Context, threadID string) (string, error) {
	streams, err := s.streams(threadID)
	if err != nil {
		return "", err
	}
	at, err := s.start(ctx, Query{}, streams)
	if err != nil {
		return "", err
	}
	return cursorOf(at.ids, at.marks), nil
}

// streams returns the keys a subscription reads: the thread's stream, or
// every shard's feed.
func (s *Subscriber) streams(threadID string) ([]string, error) {
	if threadID != "" {
		if err := keys.ValidateThreadID(threadID); err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		return []string{s.layout.Events(threadID)}, nil
	}
	out := make([]string, s.layout.Shards())
	for i := range out {
		out[i] = s.layout.Feed(i)
	}
	return out, nil
}

// start resolves the query's start into one position per stream. "Now" is
// the last ID each stream holds (read once, so that nothing appended after
// the subscription starts is missed between reads).
func (s *Subscriber) start(ctx context.Context, q Query, streams []string) (positions, error) {
	at := positions{make([]string, len(streams)), make([]string, len(streams))}
	switch {
	case q.From != "":
		var err error
		at.ids, at.marks, err = parseCursor(q.From, len(streams))
		return at, err
	case !q.Since.IsZero():
		for i := range at.ids {
			at.ids[i] = beforeTime(q.Since)
		}
		return at, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.XMessageSliceCmd, len(streams))
	for i, k := range streams {
		cmds[i] = pipe.XRevRangeN(ctx, k, "+", "-", 1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return positions{}, fmt.Errorf("stream: find the end of the streams: %w", err)
	}
	for i, c := range cmds {
		at.ids[i] = "0-0"
		if msgs, _ := c.Result(); len(msgs) > 0 {
			at.ids[i], at.marks[i] = msgs[0].ID, markOf(msgs[0])
		}
	}
	return at, nil
}

// xread is a blocking read after the positions.
func (s *Subscriber) xread(rdb redis.UniversalClient) func(ctx context.Context, streams, ids []string) ([]redis.XStream, error) {
	return func(ctx context.Context, streams, ids []string) ([]redis.XStream, error) {
		return rdb.XRead(ctx, &redis.XReadArgs{
			Streams: append(append([]string{}, streams...), ids...),
			Count:   s.opts.Count,
			Block:   s.opts.Block,
		}).Result()
	}
}

// xreadChecked reads after the positions at without blocking and, in the
// same MULTI (so that no write falls between), what each stream holds at
// its start and at the positions pre and at (see checked), and, where pre
// is a time position the stream was never seen holding an entry at or
// before, whether the stream was ever trimmed. A position is
// held when the stream holds an entry with its ID and, where the position
// has a mark, the same mark: an entry that took that ID in a new
// incarnation of the stream is another event.
func (s *Subscriber) xreadChecked(rdb redis.UniversalClient) func(ctx context.Context, streams []string, pre, at positions) ([]redis.XStream, []checked, error) {
	// The time position at which each stream was seen holding an entry at
	// or before it: from then on, a first entry past it means that entry
	// was trimmed, which XINFO STREAM need not be asked. (Cluster readers
	// share this closure, one per stream.)
	var mu sync.Mutex
	settled := map[string]string{}
	return func(ctx context.Context, streams []string, pre, at positions) ([]redis.XStream, []checked, error) {
		pipe := rdb.TxPipeline()
		firsts := make([]*redis.XMessageSliceCmd, len(streams))
		entries := make([][2]*redis.XMessageSliceCmd, len(streams))
		infos := make([]*redis.XInfoStreamCmd, len(streams))
		out := make([]checked, len(streams))
		mu.Lock()
		for i, k := range streams {
			if timePosition(pre.ids[i]) && settled[k] == pre.ids[i] {
				out[i].deleted, out[i].deletedKnown = true, true
			}
			firsts[i] = pipe.XRangeN(ctx, k, "-", "+", 1)
			if timePosition(pre.ids[i]) && !out[i].deletedKnown {
				infos[i] = pipe.XInfoStream(ctx, k)
				infos[i].SetFirstKeyPos(2) // the key follows STREAM: a Cluster routes the MULTI by it
			}
			for h, pos := range []string{pre.ids[i], at.ids[i]} {
				if realPosition(pos) && (h == 0 || pos != pre.ids[i]) {
					entries[i][h] = pipe.XRangeN(ctx, k, pos, pos, 1)
				}
			}
		}
		mu.Unlock()
		read := pipe.XRead(ctx, &redis.XReadArgs{
			Streams: append(append([]string{}, streams...), at.ids...),
			Count:   s.opts.Count,
			Block:   -1,
		})
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !noSuchKey(err) {
			return nil, nil, err
		}
		for i, c := range firsts {
			msgs, err := c.Result()
			if err != nil {
				return nil, nil, err
			}
			if len(msgs) > 0 {
				out[i].first = msgs[0].ID
				if timePosition(pre.ids[i]) && compareIDs(msgs[0].ID, pre.ids[i]) <= 0 {
					mu.Lock()
					settled[streams[i]] = pre.ids[i]
					mu.Unlock()
				}
			}
			if infos[i] != nil {
				info, err := infos[i].Result()
				switch {
				case err == nil:
					// A stream that holds an entry has had one added:
					// entries-added 0 is a server that does not count.
					out[i].deleted = info.EntriesAdded > info.Length
					out[i].deletedKnown = info.EntriesAdded > 0
				case !noSuchKey(err):
					return nil, nil, err
				}
			}
			// A position not read (it claims no entry) counts as held; pos
			// equal to pre was read once, as pre.
			var held [2]bool
			for h, c := range entries[i] {
				held[h] = c == nil
				if c == nil {
					continue
				}
				msgs, err := c.Result()
				if err != nil {
					return nil, nil, err
				}
				want := [2]string{pre.marks[i], at.marks[i]}[h]
				held[h] = len(msgs) > 0 && (want == "" || markOf(msgs[0]) == want)
			}
			if at.ids[i] == pre.ids[i] {
				held[1] = held[0]
			}
			out[i].preHeld, out[i].posHeld = held[0], held[1]
		}
		res, err := read.Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, nil, err
		}
		return res, out, nil
	}
}

// noSuchKey reports whether err is Redis's reply to XINFO STREAM of a key
// that does not exist.
func noSuchKey(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such key")
}
