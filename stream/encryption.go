package stream

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/seal"
)

// valueDecoder decodes the values events carry: opened, with a keyring,
// with the AAD of their place (docs/storage-format.md, "Encrypted values"),
// then decoded with the serializer.
type valueDecoder struct {
	ser       checkpoint.Serializer
	prefix    string
	ring      *checkpoint.Keyring
	readPlain bool
}

func (s *Subscriber) valueDecoder() valueDecoder {
	return valueDecoder{ser: s.opts.Serializer, prefix: s.opts.Prefix, ring: s.opts.Encryption, readPlain: s.opts.ReadPlaintext}
}

// valuePlace is the place of a value an event carries, given the event.
type valuePlace interface {
	aad(prefix string, ev *Event) []byte
	describe(ev *Event) string
}

// channelAAD: a checkpoint event's value of channel at version (the
// event's "vv:" field).
type channelAAD struct{ channel, version string }

func (p channelAAD) aad(prefix string, ev *Event) []byte {
	return seal.ChannelAAD(prefix, ev.ThreadID, ev.CheckpointNS, p.channel, p.version)
}

func (p channelAAD) describe(ev *Event) string {
	return fmt.Sprintf("thread %q namespace %q: channel %q version %q", ev.ThreadID, ev.CheckpointNS, p.channel, p.version)
}

// writeAAD: a writes event's value at position pos (in its PutWrites call)
// to channel: the write of index checkpoint.WriteIndex(channel, pos).
type writeAAD struct {
	pos     int
	channel string
}

func (p writeAAD) aad(prefix string, ev *Event) []byte {
	return seal.WriteAAD(prefix, ev.ThreadID, ev.CheckpointNS, ev.CheckpointID, ev.TaskID, checkpoint.WriteIndex(p.channel, p.pos), p.channel)
}

func (p writeAAD) describe(ev *Event) string {
	return fmt.Sprintf("thread %q namespace %q checkpoint %q: write %d of task %q to %q", ev.ThreadID, ev.CheckpointNS, ev.CheckpointID,
		checkpoint.WriteIndex(p.channel, p.pos), ev.TaskID, p.channel)
}

// load opens (with a keyring, or when the value is encrypted) and decodes
// a stored value of event ev at place p.
func (d valueDecoder) load(ctx context.Context, ev *Event, p valuePlace, stored string) (any, error) {
	if d.ring != nil || seal.IsSealed(stored) {
		plain, err := codec.OpenValue(ctx, d.ring, d.readPlain, stored,
			func() []byte { return p.aad(d.prefix, ev) }, func() string { return p.describe(ev) })
		if err != nil {
			return nil, err
		}
		stored = plain
	}
	return codec.LoadValue(d.ser, stored)
}
