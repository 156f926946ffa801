package stream

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ErrInvalidOptions is returned by New for Options it cannot use. It wraps
// checkpoint.ErrInvalidConfig.
var ErrInvalidOptions = fmt.Errorf("stream: invalid options: %w", checkpoint.ErrInvalidConfig)

// Options configure a Subscriber. Prefix and Shards must be those of the
// saver that publishes.
type Options struct {
	// Prefix of the saver's keys (default "redcheck").
	Prefix string
	// Shards of the saver (default keys.DefaultShards).
	Shards int
	// Serializer decodes values included in events (default
	// checkpoint.MsgpackSerializer).
	Serializer checkpoint.Serializer
	// Block is how long one blocking read waits before it reads again
	// (default 2s). It bounds how late a cancelled context is noticed.
	Block time.Duration
	// Count is the number of events one read returns at most (default 100).
	Count int64
	// MaxBackoff bounds the wait between reconnection attempts (default 2s).
	MaxBackoff time.Duration
	// BlockingClient, when set, carries the blocking reads of every
	// subscription and consumer (XREAD BLOCK, XREADGROUP BLOCK), each of
	// which holds one of its connections while it waits: give it a pool as
	// large as the readers (the caller owns and closes it). When nil and the
	// client given to New is a *redis.Client or a *redis.ClusterClient, each
	// Subscribe and Consume opens a client of its own from that client's
	// Options (a pool the size of its readers; hooks added to the caller's
	// client are not copied) and closes it when it ends, so that
	// subscriptions never take connections from the application's pool. Any
	// other client (a Ring, a wrapper) carries the blocking reads itself.
	BlockingClient redis.UniversalClient

	// Encryption is the keyring of the saver that publishes, when it
	// encrypts (redissaver.Options.Encryption): the values events carry
	// (IncludeValues) are opened with it, bound to their place as in the
	// saver. Without it, an event that carries an encrypted value fails to
	// decode (checkpoint.ErrDecrypt).
	Encryption *checkpoint.Keyring
	// ReadPlaintext, with Encryption, lets events carry values in the clear
	// (published before encryption was switched on): the saver's migration
	// option. Without it such a value is refused (checkpoint.ErrDecrypt).
	ReadPlaintext bool

	// TracerProvider makes the spans of Consume, one per event handled
	// (docs/observability.md). Nil means otel.GetTracerProvider(): a no-op
	// until the application installs an OpenTelemetry SDK.
	TracerProvider trace.TracerProvider
	// MeterProvider makes Consume's metrics (docs/observability.md). Nil
	// means otel.GetMeterProvider(): a no-op until the application installs
	// an OpenTelemetry SDK.
	MeterProvider metric.MeterProvider
	// Logger, when set, receives what an operator must know and a handler
	// does not see: a gap a consumer reported (events may be lost to its
	// group) and an event moved to the dead-letter stream, both at Warn
	// (docs/observability.md). Nil: no logs.
	Logger *slog.Logger
}

// Subscriber reads the events of one prefix. It is safe for concurrent use.
// Its blocking reads do not use the client given to New (see
// Options.BlockingClient); short commands (positions, acknowledgements,
// claims) do.
type Subscriber struct {
	rdb    redis.UniversalClient
	opts   Options
	layout keys.Layout
	tel    *telemetry
}

// New returns a Subscriber reading through rdb, which the caller owns.
func New(rdb redis.UniversalClient, opts Options) (*Subscriber, error) {
	if rdb == nil {
		return nil, fmt.Errorf("%w: nil Redis client", ErrInvalidOptions)
	}
	if opts.Prefix == "" {
		opts.Prefix = "redcheck"
	}
	if opts.Serializer == nil {
		opts.Serializer = checkpoint.MsgpackSerializer{}
	}
	if opts.Block == 0 {
		opts.Block = 2 * time.Second
	}
	if opts.Count == 0 {
		opts.Count = 100
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 2 * time.Second
	}
	if opts.Block < time.Millisecond || opts.Count < 1 || opts.MaxBackoff < time.Millisecond {
		return nil, fmt.Errorf("%w: Block, Count and MaxBackoff must be positive", ErrInvalidOptions)
	}
	if opts.ReadPlaintext && opts.Encryption == nil {
		return nil, fmt.Errorf("%w: ReadPlaintext needs Encryption", ErrInvalidOptions)
	}
	layout, err := keys.New(opts.Prefix, opts.Shards)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	return &Subscriber{rdb: rdb, opts: opts, layout: layout, tel: newTelemetry(opts)}, nil
}
