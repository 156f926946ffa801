package stream

import "github.com/redis/go-redis/v9"

// blockingClient returns the client that carries the blocking reads of one
// subscription or consumer with the given number of readers (one per
// stream on a Cluster, one in all otherwise), and the function that
// releases it: Options.BlockingClient, else a client opened from the
// Options of the caller's *redis.Client or *redis.ClusterClient (closed on
// release), else the caller's client.
func (s *Subscriber) blockingClient(readers int) (redis.UniversalClient, func()) {
	if s.opts.BlockingClient != nil {
		return s.opts.BlockingClient, func() {}
	}
	switch c := s.rdb.(type) {
	case *redis.Client:
		o := *c.Options()
		o.PoolSize = readers
		o.MinIdleConns, o.MaxIdleConns, o.MaxActiveConns = 0, readers, 0
		own := redis.NewClient(&o)
		return own, func() { _ = own.Close() }
	case *redis.ClusterClient:
		o := *c.Options()
		o.PoolSize = readers
		o.MinIdleConns, o.MaxIdleConns, o.MaxActiveConns = 0, readers, 0
		own := redis.NewClusterClient(&o)
		return own, func() { _ = own.Close() }
	}
	return s.rdb, func() {}
}
