package stream

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// readFunc reads from some streams, after the given positions (XREAD) or
// for a group (XREADGROUP, positions ignored), blocking up to the
// subscriber's Block. It returns redis.Nil when nothing arrived.
type readFunc func(ctx context.Context, streams, ids []string) ([]redis.XStream, error)

// batch is what one read returned.
type batch struct {
	res []redis.XStream
	err error
}

// pump reads in the background and sends each batch on the returned
// channel, waiting for it to be taken before reading on. A Redis command
// cannot read streams of several Cluster slots, so on a Cluster it runs one
// reader per stream; otherwise one reader reads them all at once. Readers
// back off after an error (doubling up to MaxBackoff) and stop when ctx
// ends; the channel is closed once they all have.
func (s *Subscriber) pump(ctx context.Context, streams, ids []string, read readFunc) <-chan batch {
	out := make(chan batch)
	var wg sync.WaitGroup
	groups := [][]int{}
	if _, cluster := s.rdb.(*redis.ClusterClient); cluster && len(streams) > 1 {
		for i := range streams {
			groups = append(groups, []int{i})
		}
	} else {
		all := make([]int, len(streams))
		for i := range all {
			all[i] = i
		}
		groups = append(groups, all)
	}
	for _, g := range groups {
		ks := make([]string, len(g))
		pos := make([]string, len(g))
		for j, i := range g {
			ks[j], pos[j] = streams[i], ids[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.readLoop(ctx, ks, pos, read, out)
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

func (s *Subscriber) readLoop(ctx context.Context, streams, ids []string, read readFunc, out chan<- batch) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		res, err := read(ctx, streams, ids)
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 10*time.Millisecond), s.opts.MaxBackoff)
			select {
			case out <- batch{err: err}:
			case <-ctx.Done():
				return
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		for _, st := range res {
			if n := len(st.Messages); n > 0 {
				for j := range streams {
					if streams[j] == st.Stream {
						ids[j] = st.Messages[n-1].ID
					}
				}
			}
		}
		select {
		case out <- batch{res: res}:
		case <-ctx.Done():
			return
		}
	}
}
