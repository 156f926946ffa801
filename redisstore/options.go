package redisstore

import (
	"time"

	"github.com/graphstate/redcheck/internal/keys"
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
