package redissaver

import (
	"fmt"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/keys"
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

	// TTL, when positive, makes every key of a thread expire TTL after the
	// thread's last write (Put or PutWrites); each checkpoint expires TTL
	// after it was written or its writes last changed. Zero keeps everything
	// forever. Redis expiry works in milliseconds.
	TTL time.Duration

	// RefreshOnRead extends the TTL of a checkpoint and of its thread's keys
	// when GetTuple reads it.
	RefreshOnRead bool

	// Serializer encodes channel and write values (default
	// checkpoint.MsgpackSerializer).
	Serializer checkpoint.Serializer

	// Events configure the events every write publishes (on by default).
	Events Events

	// PageSize is the number of checkpoints one List call to Redis returns at
	// most (default 100). A List with a smaller Limit asks for no more than
	// the Limit.
	PageSize int
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
	layout, err := keys.New(o.Prefix, o.Shards)
	if err != nil {
		return o, keys.Layout{}, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	o.Shards = layout.Shards()
	return o, layout, nil
}

func (o Options) ttlMillis() int64 { return o.TTL.Milliseconds() }
