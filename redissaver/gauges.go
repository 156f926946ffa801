package redissaver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The saver's gauges (docs/observability.md), observed by RegisterGauges.
const (
	metricBacklog = "redcheck.reclaim.backlog"
	metricExpired = "redcheck.threads.expired"
)

// RegisterGauges registers, with Options.MeterProvider, the gauges of the
// prefix's garbage, observed at each collection of the provider's readers:
//
//   - redcheck.reclaim.backlog ({generation}): the generations queued for
//     reclaim, every shard's (deleted, expired or replaced threads whose
//     keys are not reclaimed yet, due or not);
//   - redcheck.threads.expired ({thread}): the threads whose lease
//     (Options.TTL) ran out and that no Sweep or write has retired yet.
//
// Both carry redcheck.prefix. One collection costs one pipeline of two
// O(log n) commands per shard (ZCARD of the reclaim queue, ZCOUNT of the
// registry's deadlines up to now, by this process's clock); a failed one
// reports no point and hands its error to the provider (otel.Handle, with
// the SDK). The gauges are the prefix's, not this process's: register them
// in one process of those that share a prefix (or aggregate with max).
//
// Unregister the returned registration when the Saver is no longer used
// (the provider keeps the callback, and the Saver, until then). With a
// no-op provider (no SDK installed) registering costs nothing.
func (s *Saver) RegisterGauges() (metric.Registration, error) {
	mp := s.opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(instrumentationName)
	backlog, err := meter.Int64ObservableGauge(metricBacklog, metric.WithUnit("{generation}"),
		metric.WithDescription("Generations queued for reclaim (deleted, expired or replaced threads whose keys are not reclaimed yet), every shard's."))
	if err != nil {
		return nil, fmt.Errorf("redissaver: gauges: %w", err)
	}
	expired, err := meter.Int64ObservableGauge(metricExpired, metric.WithUnit("{thread}"),
		metric.WithDescription("Threads whose lease ran out, not yet retired by Sweep or a write to their shard."))
	if err != nil {
		return nil, fmt.Errorf("redissaver: gauges: %w", err)
	}
	attrs := metric.WithAttributeSet(attribute.NewSet(attrPrefix.String(s.opts.Prefix)))
	reg, err := meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		queued, lapsed, err := s.garbage(ctx, time.Now())
		if err != nil {
			return err
		}
		o.ObserveInt64(backlog, queued, attrs)
		o.ObserveInt64(expired, lapsed, attrs)
		return nil
	}, backlog, expired)
	if err != nil {
		return nil, fmt.Errorf("redissaver: gauges: %w", err)
	}
	return reg, nil
}

// garbage reads, in one pipeline, the generations queued for reclaim and
// the threads whose lease ran out by now, over every shard.
func (s *Saver) garbage(ctx context.Context, now time.Time) (queued, lapsed int64, err error) {
	n := s.layout.Shards()
	gcs := make([]*redis.IntCmd, n)
	regs := make([]*redis.IntCmd, n)
	pipe := s.rdb.Pipeline()
	until := strconv.FormatInt(now.UnixMilli(), 10)
	for i := range n {
		gcs[i] = pipe.ZCard(ctx, s.layout.GC(i))
		regs[i] = pipe.ZCount(ctx, s.layout.Threads(i), "1", until)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, redisErr("gauges", err)
	}
	for i := range n {
		queued += gcs[i].Val()
		lapsed += regs[i].Val()
	}
	return queued, lapsed, nil
}
