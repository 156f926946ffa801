package redisstore

import (
	"log/slog"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Defaults and limits.
const (
	// DefaultPrefix is the key prefix of a Store whose Options name none.
	DefaultPrefix = "redcheck:store"
	// DefaultSearchLimit is the page size of Search when Limit is 0.
	DefaultSearchLimit = 10
	// DefaultListLimit is the page size of ListNamespaces when Limit is 0.
	DefaultListLimit = 100
	// MaxSearchLimit and MaxSearchOffset cap SearchOptions.Limit and
	// Offset: a Search keeps Offset+Limit candidates in the client and
	// reads Limit items; a request above them fails with
	// ErrInvalidArgument.
	MaxSearchLimit  = 1000
	MaxSearchOffset = 10000
	// MaxListLimit and MaxListOffset cap ListNamespacesOptions.Limit and
	// Offset, the same way.
	MaxListLimit  = 1000
	MaxListOffset = 100000
	// MaxDims bounds Options.Dims.
	MaxDims = 8192
	// MaxValueDepth bounds the nesting of a value (objects and arrays), so
	// that the Lua JSON decoder of every Redis can read it back.
	MaxValueDepth = 512
	// MaxKeyLen bounds the length of an item key, in bytes.
	MaxKeyLen = 1024
	// MaxLabelLen bounds the length of one namespace label, in bytes.
	MaxLabelLen = 1024
	// MaxNamespaceDepth bounds the number of labels of a namespace.
	MaxNamespaceDepth = 64

	// sweepPerWrite is the number of index entries of expired items each
	// write removes at most.
	sweepPerWrite = 64
	// sweepBatch is the number Sweep removes per round trip.
	sweepBatch = 1000
)

// Options configure a Store. The zero value is valid: no TTL, no semantic
// search, keys under "{redcheck:store}:".
type Options struct {
	// Prefix names the store (default "redcheck:store"). Every key of the
	// store starts with "{Prefix}:": the prefix is the hash tag, so the
	// whole store lives in one Redis Cluster slot (see the package doc for
	// the trade-off). Stores with different prefixes are fully isolated. It
	// must be 1 to 128 bytes without '{', '}', spaces or control bytes.
	Prefix string

	// TTL, when positive, is the time to live of every item put without a
	// WithTTL option: the item expires TTL after its last Put (or its last
	// refreshing read). Zero keeps items forever. Redis expiry works in
	// milliseconds.
	TTL time.Duration

	// RefreshOnRead says whether Get and Search extend the TTL of the items
	// they return, by the TTL each item was put with, unless the call says
	// otherwise. The zero value, RefreshDefault, means on, as LangGraph's
	// refresh_on_read defaults to true; RefreshOff turns it off. Items
	// without a TTL are unaffected.
	RefreshOnRead Refresh

	// Embedder, when set, turns on semantic search: Put embeds the text at
	// Fields of each value (unless told otherwise per item), and Search
	// ranks by cosine similarity to its Query. Without it, Put stores no
	// vectors and a Search ignores its Query.
	Embedder Embedder

	// Dims is the length of the Embedder's vectors (required with an
	// Embedder, 1 to MaxDims). Vectors of another length are refused with
	// ErrEmbedding.
	Dims int

	// Fields are the JSON paths of the texts to embed in each value
	// (default ["$"], the whole value as canonical JSON). A path is "$", or
	// field names joined by '.', with "[N]" (negative counts from the end)
	// or "[*]" after a list, "*" for every field of an object and "{a,b.c}"
	// for several fields: "text", "a.b", "list[*].text", "turns[-1]". Each
	// text found is one vector; a string is embedded as is, a number or
	// boolean in its JSON form, an object or list as canonical JSON. An item
	// matches a query by its best vector.
	Fields []string

	// Encryption, when set, encrypts the value of every item the store
	// puts, with AES-256-GCM under the keyring's current key, bound to the
	// store prefix, the item's namespace and key: a value altered, moved by
	// hand to another item, or sealed with a key the ring lacks reads as
	// ErrDecrypt, never as a value (docs/operations.md, "Encryption at
	// rest"). Reads take any key of the ring. Filters keep working: they run
	// in the client, on the values it has decrypted. Namespaces, keys,
	// timestamps and TTLs stay in the clear, and so would vectors: a store
	// with both an Embedder and Encryption needs EmbeddingsInClear. With it
	// on, a value stored in the clear is refused with ErrDecrypt unless
	// ReadPlaintext is set.
	Encryption *checkpoint.Keyring

	// ReadPlaintext, with Encryption, lets reads take item values stored in
	// the clear (put before encryption was switched on) while new puts are
	// encrypted: the migration option. Leave it off once every value is
	// encrypted (re-put the items, or run redcheck rekey with --store).
	ReadPlaintext bool

	// EmbeddingsInClear, with Encryption and an Embedder, accepts that the
	// vectors of the items are stored in the clear, as the search needs
	// them: a vector reveals much of the text it was computed from (texts
	// can be approximately recovered from their embeddings, and equal or
	// similar texts show as equal or close vectors). Without it, New refuses
	// an Embedder with Encryption (ErrInvalidOptions), and semantic search
	// is not available on an encrypted store.
	EmbeddingsInClear bool

	// TracerProvider receives a span per call of each public operation
	// (default: otel.GetTracerProvider(), a no-op until the application
	// installs an SDK); MeterProvider the store's metrics (default:
	// otel.GetMeterProvider()). See docs/observability.md: no span, metric
	// or log holds an item's value, a vector, a query's text or a filter;
	// namespaces and keys are span attributes, never metric attributes.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	// Logger, when set, receives a record of each data loss the store
	// detects (Warn). Nil: no logs.
	Logger *slog.Logger
}

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, []path, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if _, err := keys.New(o.Prefix, 1); err != nil {
		return o, nil, errorf(ErrInvalidOptions, "prefix: %v", err)
	}
	if _, err := o.RefreshOnRead.resolve(true); err != nil {
		return o, nil, errorf(ErrInvalidOptions, "RefreshOnRead: %v", err)
	}
	if err := validTTL(o.TTL); err != nil {
		return o, nil, errorf(ErrInvalidOptions, "TTL: %v", err)
	}
	if o.ReadPlaintext && o.Encryption == nil {
		return o, nil, errorf(ErrInvalidOptions, "ReadPlaintext needs Encryption")
	}
	if o.EmbeddingsInClear && (o.Encryption == nil || o.Embedder == nil) {
		return o, nil, errorf(ErrInvalidOptions, "EmbeddingsInClear needs Encryption and an Embedder")
	}
	if o.Embedder != nil && o.Encryption != nil && !o.EmbeddingsInClear {
		return o, nil, errorf(ErrInvalidOptions, "an Embedder with Encryption stores the items' vectors in the clear, "+
			"and a vector reveals much of its text: set EmbeddingsInClear to accept it, or leave the Embedder out")
	}
	if o.Embedder == nil {
		if o.Dims != 0 || o.Fields != nil {
			return o, nil, errorf(ErrInvalidOptions, "Dims and Fields need an Embedder")
		}
		return o, nil, nil
	}
	if o.Dims < 1 || o.Dims > MaxDims {
		return o, nil, errorf(ErrInvalidOptions, "Dims %d: want 1 to %d with an Embedder", o.Dims, MaxDims)
	}
	if o.Fields == nil {
		o.Fields = []string{"$"}
	}
	if len(o.Fields) == 0 {
		return o, nil, errorf(ErrInvalidOptions, "Fields is empty (leave it nil for the whole value)")
	}
	o.Fields = append([]string(nil), o.Fields...)
	paths, err := parsePaths(o.Fields)
	if err != nil {
		return o, nil, errorf(ErrInvalidOptions, "Fields: %v", err)
	}
	return o, paths, nil
}

// validTTL accepts 0 (no expiry) and durations of at least a millisecond.
func validTTL(d time.Duration) error {
	switch {
	case d < 0:
		return errorf(ErrInvalidArgument, "negative TTL %v", d)
	case d > 0 && d < time.Millisecond:
		return errorf(ErrInvalidArgument, "TTL %v is below one millisecond", d)
	}
	return nil
}
