package redissaver

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of Options.
const (
	DefaultPrefix   = "redcheck"
	DefaultPageSize = 100
	// scanBudget bounds the index entries one List call examines, so a
	// selective filter cannot make one call run for long.
	scanBudget = 1024
)

// Options configure a Saver. The zero value is valid.
type Options struct {
	// Prefix starts every key of the saver (default "redcheck"). Savers with
	// different prefixes are fully isolated from each other on one Redis,
	// List over every thread included. It must not hold '{', '}', spaces or
	// control bytes.
	Prefix string

	// Shards is the number of shards threads are spread over (default
	// keys.DefaultShards, 16). See package keys for the trade-off. It is part
	// of the layout: keep it fixed for the lifetime of a prefix.
	Shards int

	// TTL, when positive, is the lease of a thread: the thread expires, as a
	// whole, TTL after its last write (Put or PutWrites), or its last read
	// with RefreshOnRead. An expired thread reads as not found at once; its
	// keys are reclaimed in bounded steps by later writes to its shard and by
	// Sweep. Data keys carry no Redis TTL (so a volatile-* eviction policy
	// never evicts them); the thread's event stream does. Zero keeps threads
	// forever. Milliseconds are the unit.
	TTL time.Duration

	// RefreshOnRead renews the lease of a thread whenever GetTuple or List
	// returns one of its checkpoints.
	RefreshOnRead bool

	// AcceptEviction lets New accept a server whose eviction policy may
	// evict keys without a TTL (allkeys-lru, allkeys-lfu, allkeys-random with
	// maxmemory set), or whose policy cannot be read (INFO and CONFIG both
	// refused; miniredis). An evicted key is never served as state: reads
	// that need it fail with checkpoint.ErrDataLoss. But the data is gone.
	AcceptEviction bool

	// Serializer encodes channel and write values (default
	// checkpoint.MsgpackSerializer).
	Serializer checkpoint.Serializer

	// Events configure the events every write publishes (on by default).
	Events Events

	// PageSize is the number of checkpoints one List call to Redis returns at
	// most (default 100). A List with a smaller Limit asks for no more than
	// the Limit.
	PageSize int

	// Compression compresses large values on Put and PutWrites (off by
	// default). Reads take compressed and plain values alike, whatever it
	// says.
	Compression Compression

	// Encryption, when set, encrypts every value the saver stores (channel
	// values, pending writes, and so the values events carry) with
	// AES-256-GCM under the keyring's current key, bound to its place: a
	// value altered, moved by hand to another thread, namespace, channel,
	// version, checkpoint, task or write index, or sealed with a key the
	// ring lacks reads as checkpoint.ErrDecrypt, never as state
	// (docs/operations.md, "Encryption at rest"). Reads take any key of the
	// ring. Off (nil) by default; with it on, a value stored in the clear is
	// refused with checkpoint.ErrDecrypt unless ReadPlaintext is set.
	Encryption *checkpoint.Keyring

	// ReadPlaintext, with Encryption, lets reads take values stored in the
	// clear (written before encryption was switched on) while new writes
	// are encrypted: the migration option. Leave it off once every value is
	// encrypted: a plaintext value is then refused, so that one planted by
	// hand is never answered as state.
	ReadPlaintext bool

	// TracerProvider makes the spans of the saver's operations, one per
	// call (docs/observability.md). Nil means otel.GetTracerProvider(): a
	// no-op until the application installs an OpenTelemetry SDK.
	TracerProvider trace.TracerProvider

	// MeterProvider makes the saver's metrics (docs/observability.md). Nil
	// means otel.GetMeterProvider(): a no-op until the application installs
	// an OpenTelemetry SDK.
	MeterProvider metric.MeterProvider

	// Logger, when set, receives a Warn record for each data loss an
	// operation detects (checkpoint.ErrDataLoss) and an Error record for
	// each prefix found emptied (ErrPrefixReset); nothing else. Nil logs
	// nothing.
	Logger *slog.Logger
}

// Defaults of Compression.
const (
	DefaultCompressionMinBytes = 1 << 10
	DefaultCompressionLevel    = 6
)

// Compression configures the compression of stored values: channel values
// and pending writes whose stored form (docs/storage-format.md, "Stored
// values") is at least MinBytes long are stored as raw DEFLATE (RFC 1951),
// flagged by their first byte, when that makes them smaller. Every reader of
// format 2 (this package, package stream, the TypeScript client, redcheck
// check) reads both forms; an event with Events.IncludeValues carries a
// value as stored, compressed or not.
//
// It is off by default: switch it on once every reader of the prefix reads
// compressed values (a reader built before it refuses them as corrupt). The
// cost is client CPU on each Put and PutWrites of a large value, and on each
// read of one.
type Compression struct {
	// Enabled switches compression on.
	Enabled bool
	// MinBytes is the size of the stored form from which a value is
	// compressed (default 1 KiB): smaller ones gain little.
	MinBytes int
	// Level is the DEFLATE level, 1 (fastest) to 9 (smallest) (default 6,
	// zlib's default as well).
	Level int
}

func (c Compression) withDefaults() (Compression, error) {
	if c.MinBytes == 0 {
		c.MinBytes = DefaultCompressionMinBytes
	}
	if c.Level == 0 {
		c.Level = DefaultCompressionLevel
	}
	if c.MinBytes < 0 || c.Level < codec.MinLevel || c.Level > codec.MaxLevel {
		return c, invalidOptions("Compression: MinBytes must not be negative, Level must be %d to %d", codec.MinLevel, codec.MaxLevel)
	}
	return c, nil
}

func (o Options) withDefaults() (Options, keys.Layout, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Serializer == nil {
		o.Serializer = checkpoint.MsgpackSerializer{}
	}
	if o.PageSize == 0 {
		o.PageSize = DefaultPageSize
	}
	if o.PageSize < 0 || o.PageSize > scanBudget {
		return o, keys.Layout{}, fmt.Errorf("%w: PageSize must be 1 to %d", ErrInvalidOptions, scanBudget)
	}
	if o.TTL < 0 {
		return o, keys.Layout{}, fmt.Errorf("%w: negative TTL", ErrInvalidOptions)
	}
	if o.TTL > 0 && o.TTL < time.Millisecond {
		return o, keys.Layout{}, fmt.Errorf("%w: TTL below one millisecond", ErrInvalidOptions)
	}
	if o.RefreshOnRead && o.TTL == 0 {
		return o, keys.Layout{}, fmt.Errorf("%w: RefreshOnRead needs a TTL", ErrInvalidOptions)
	}
	ev, err := o.Events.withDefaults()
	if err != nil {
		return o, keys.Layout{}, err
	}
	o.Events = ev
	if o.Compression, err = o.Compression.withDefaults(); err != nil {
		return o, keys.Layout{}, err
	}
	if o.ReadPlaintext && o.Encryption == nil {
		return o, keys.Layout{}, fmt.Errorf("%w: ReadPlaintext needs Encryption", ErrInvalidOptions)
	}
	layout, err := keys.New(o.Prefix, o.Shards)
	if err != nil {
		return o, keys.Layout{}, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	o.Shards = layout.Shards()
	return o, layout, nil
}

func (o Options) ttlMillis() int64 { return o.TTL.Milliseconds() }
