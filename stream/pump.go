package stream

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// reader reads from some streams. block reads after the given positions
// (XREAD) or for a group (XREADGROUP, positions ignored), blocking up to the
// subscriber's Block; it returns redis.Nil when nothing arrived. check, when
// not nil, reads after the positions at without blocking and, in the same
// transaction, what each stream holds at its start and at the positions pre
// and at (see checked), so that a gap between a position and what the
// stream holds is seen.
type reader struct {
	block func(ctx context.Context, streams, ids []string) ([]redis.XStream, error)
	check func(ctx context.Context, streams []string, pre, at positions) ([]redis.XStream, []checked, error)
}

// positions are a reader's positions, one per stream: the IDs it reads
// after and the marks of the entries at them ("" where unknown: a position
// that is no entry, a cursor without marks, a consumer group's reads).
type positions struct{ ids, marks []string }

func (p positions) clone() positions {
	return positions{slices.Clone(p.ids), slices.Clone(p.marks)}
}

// batch is what one read returned, in the order a subscription delivers
// it: the streams whose time position could not be judged (trimUnknown),
// the gaps judged from the positions before the entries a blocking read
// returned, those entries, the gaps judged from the positions after them,
// then the entries the checked read itself returned.
type batch struct {
	unknown []error
	ahead   []gapAt
	read    []redis.XStream
	after   []gapAt
	res     []redis.XStream
	err     error
}

// gapAt is a gap, and the position a subscription resumed from it starts
// at (with the mark of its entry): where its stream is read on from, or,
// for a gap that precedes entries the batch delivers after it, the
// position before the gap.
type gapAt struct {
	gap          *GapError
	resume, mark string
}

// pump reads in the background and sends each batch on the returned
// channel, waiting for it to be taken before reading on. A Redis command
// cannot read streams of several Cluster slots, so on a Cluster it runs one
// reader per stream; otherwise one reader reads them all at once. Readers
// back off after an error (doubling up to MaxBackoff) and stop when ctx
// ends; the channel is closed once they all have.
func (s *Subscriber) pump(ctx context.Context, rdb redis.UniversalClient, streams []string, at positions, r reader) <-chan batch {
	out := make(chan batch)
	var wg sync.WaitGroup
	for _, g := range readGroups(rdb, len(streams)) {
		ks := make([]string, len(g))
		pos := positions{make([]string, len(g)), make([]string, len(g))}
		for j, i := range g {
			ks[j], pos.ids[j], pos.marks[j] = streams[i], at.ids[i], at.marks[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.readLoop(ctx, ks, pos, r, out)
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

// readGroups splits n streams among readers: one each on a Cluster, all in
// one otherwise.
func readGroups(rdb redis.UniversalClient, n int) [][]int {
	groups := [][]int{}
	if _, cluster := rdb.(*redis.ClusterClient); cluster && n > 1 {
		for i := range n {
			groups = append(groups, []int{i})
		}
		return groups
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return append(groups, all)
}

// readLoop reads until ctx ends. With a check, the first read, the read
// after an error, after a full batch, after a batch that waited to be
// taken and after an idle block are checked reads; a blocking read that
// returns entries is followed at once by a checked read (see detectGap),
// tried again after an error before its entries are delivered. A
// gap judged from the position after its entries is sent after them; one
// judged from the position before them is sent ahead of them, and resuming
// from it starts before them again: no cursor a subscription yields skips
// an entry it has not yielded yet.
func (s *Subscriber) readLoop(ctx context.Context, streams []string, at positions, r reader, out chan<- batch) {
	ids := at.ids
	backoff := time.Duration(0)
	needCheck := r.check != nil
	// send hands a batch over. When it has to wait for the batch to be
	// taken (a slow consumer), the stream may change meanwhile, past the
	// positions the last check vouched for: the next read is then a
	// checked one, not a blocking read that would skip what a trim removed.
	send := func(b batch) bool {
		select {
		case out <- b:
			return true
		default:
		}
		needCheck = needCheck || r.check != nil
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	fail := func(err error) bool {
		if ctx.Err() != nil {
			return false
		}
		backoff = min(max(2*backoff, 10*time.Millisecond), s.opts.MaxBackoff)
		needCheck = r.check != nil
		return send(batch{err: err}) && sleep(ctx, backoff)
	}
	// held: what a blocking read returned whose checked read failed (but
	// for a group gone), and the positions before it. Delivered unchecked, a
	// trim just before that read would go untold: the next checked read
	// starts past its entries. So it is held, and the check is tried again
	// from those positions before anything else is read.
	var held []redis.XStream
	var heldPre positions
	for ctx.Err() == nil {
		var b batch
		var read []redis.XStream // what a blocking read returned
		pre := at.clone()
		if held != nil {
			read, pre, held = held, heldPre, nil
		} else if !needCheck {
			res, err := r.block(ctx, streams, ids)
			if errors.Is(err, redis.Nil) {
				needCheck = r.check != nil
				continue
			}
			if err != nil {
				if !fail(err) {
					return
				}
				continue
			}
			at.advance(streams, res, r.check != nil)
			if r.check == nil {
				backoff = 0
				if !send(batch{read: res}) {
					return
				}
				continue
			}
			read = res
		}
		res, seen, err := r.check(ctx, streams, pre, at)
		if err != nil {
			switch {
			case read == nil:
			case isNoGroup(err):
				// The group is gone (Consume creates it again and reports
				// that): nothing to check the read against. Deliver it.
				if !send(batch{read: read}) {
					return
				}
			default:
				held, heldPre = read, pre
			}
			if !fail(err) {
				return
			}
			continue
		}
		backoff = 0
		for j, k := range streams {
			if seen[j].judged {
				if g := seen[j].gap; g != nil {
					side := &b.after
					if seen[j].ahead {
						side = &b.ahead
					}
					*side = append(*side, gapAt{gap: g, resume: g.To})
				}
				continue
			}
			if err := trimUnknown(k, pre.ids[j], seen[j]); err != nil {
				b.unknown = append(b.unknown, err)
			}
			v := detectGap(k, pre.ids[j], ids[j], seen[j])
			if v.ahead == nil && v.after == nil {
				continue
			}
			if v.resume != ids[j] {
				// Whatever this check read of the stream follows a
				// position it no longer holds: it is read again.
				res = dropStream(res, k)
				ids[j], at.marks[j] = v.resume, ""
			}
			switch {
			case v.dropRead:
				// The stream is read again from its start.
				read = dropStream(read, k)
				b.ahead = append(b.ahead, gapAt{gap: v.ahead, resume: ids[j]})
			case v.ahead != nil:
				// Delivery goes on with the entries the blocking read
				// returned, if any; resumed from the gap, a subscription
				// starts before them.
				if first := firstOf(read, k); first != "" {
					v.ahead.To = first
				}
				b.ahead = append(b.ahead, gapAt{gap: v.ahead, resume: pre.ids[j], mark: pre.marks[j]})
			}
			if v.after != nil {
				b.after = append(b.after, gapAt{gap: v.after, resume: ids[j], mark: at.marks[j]})
			}
		}
		b.read = read
		at.advance(streams, res, true)
		b.res = append(b.res, res...)
		needCheck = s.full(res) // send sets it too when it waits
		if (b.unknown != nil || b.ahead != nil || b.read != nil || b.after != nil || b.res != nil) && !send(b) {
			return
		}
	}
}

// firstOf returns the ID of the first entry a read returned from a
// stream, "" for none.
func firstOf(res []redis.XStream, stream string) string {
	for _, st := range res {
		if st.Stream == stream && len(st.Messages) > 0 {
			return st.Messages[0].ID
		}
	}
	return ""
}

// dropStream removes the entries of one stream from a read's result.
func dropStream(res []redis.XStream, stream string) []redis.XStream {
	return slices.DeleteFunc(res, func(st redis.XStream) bool { return st.Stream == stream })
}

// advance moves each position past the entries read from its stream, with
// the mark of the last of them when mark is set (else none).
func (p positions) advance(streams []string, res []redis.XStream, mark bool) {
	for _, st := range res {
		if n := len(st.Messages); n > 0 {
			for j := range streams {
				if streams[j] == st.Stream {
					p.ids[j], p.marks[j] = st.Messages[n-1].ID, ""
					if mark {
						p.marks[j] = markOf(st.Messages[n-1])
					}
				}
			}
		}
	}
}

// full reports whether a read returned a whole Count of entries of a
// stream: the reader is behind, and its next read is checked.
func (s *Subscriber) full(res []redis.XStream) bool {
	for _, st := range res {
		if int64(len(st.Messages)) >= s.opts.Count {
			return true
		}
	}
	return false
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
