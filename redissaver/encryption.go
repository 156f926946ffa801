package redissaver

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/seal"
)

// Encryption at rest (Options.Encryption; docs/storage-format.md,
// "Encrypted values"): every value is sealed with the AAD of its place at
// encode time, and opened with the AAD of the place it is read from. With
// encryption off nothing here runs but a test of a value's first byte.

// valuePlace is where a stored value belongs: the inputs of its AAD. A
// channel value has a version; a pending write a checkpoint, task and index.
type valuePlace struct {
	write      bool
	thread, ns string
	channel    string
	version    string // a channel value's
	checkpoint string // a pending write's
	task       string
	idx        int
}

func channelPlace(thread, ns, channel, version string) valuePlace {
	return valuePlace{thread: thread, ns: ns, channel: channel, version: version}
}

func writePlace(thread, ns, checkpointID, task string, idx int, channel string) valuePlace {
	return valuePlace{write: true, thread: thread, ns: ns, channel: channel, checkpoint: checkpointID, task: task, idx: idx}
}

// aad is the associated data of p under the saver's prefix.
func (s *Saver) aad(p valuePlace) []byte {
	if p.write {
		return seal.WriteAAD(s.opts.Prefix, p.thread, p.ns, p.checkpoint, p.task, p.idx, p.channel)
	}
	return seal.ChannelAAD(s.opts.Prefix, p.thread, p.ns, p.channel, p.version)
}

// String names p for an error: names and ids only, never a value.
func (p valuePlace) String() string {
	if p.write {
		return fmt.Sprintf("thread %q namespace %q checkpoint %q: write %d of task %q to %q", p.thread, p.ns, p.checkpoint, p.idx, p.task, p.channel)
	}
	return fmt.Sprintf("thread %q namespace %q: channel %q version %q", p.thread, p.ns, p.channel, p.version)
}

// seal returns stored (a plain stored form) as the saver stores it at p:
// itself with encryption off, else encrypted.
func (s *Saver) seal(ctx context.Context, p valuePlace, stored string) (string, error) {
	ring := s.opts.Encryption
	if ring == nil {
		return stored, nil
	}
	out, err := codec.SealValue(ctx, ring, s.aad(p), stored)
	if err != nil {
		return "", fmt.Errorf("redissaver: %s: %w", p, err)
	}
	return out, nil
}

// open returns the plain stored form of stored, read at p. With encryption
// off, a plain value is returned as it is (no allocation) and an encrypted
// one refused; with it on, see codec.OpenValue. Its errors wrap
// checkpoint.ErrDecrypt.
func (s *Saver) open(ctx context.Context, p valuePlace, stored string) (string, error) {
	ring := s.opts.Encryption
	if ring == nil && !seal.IsSealed(stored) {
		return stored, nil
	}
	out, err := codec.OpenValue(ctx, ring, s.opts.ReadPlaintext, stored, func() []byte { return s.aad(p) }, p.String)
	if err != nil {
		return "", fmt.Errorf("redissaver: %w", err)
	}
	return out, nil
}

// A copy moves values to another thread, where the AAD of their place
// differs: it opens each with its source place and seals it again for its
// target (a fresh nonce, the current key). With encryption off, values move
// as they are, and an encrypted one fails the copy (checkpoint.ErrDecrypt):
// moved, it could not be read.

// resealWrite returns the value of pending-write field f of checkpoint id
// (pack(channel, task path, V)) as the copy writes it to thread dst.
func (s *Saver) resealWrite(ctx context.Context, src, dst, ns, id, f, stored string) (string, error) {
	var parts [3]string // channel, task path, stored value
	if !unpack(stored, parts[:]) {
		return "", corrupt("copy thread: write %q of checkpoint %q", f, id)
	}
	if s.opts.Encryption == nil && !seal.IsSealed(parts[2]) {
		return stored, nil
	}
	task, idx, ok := codec.ParseWriteField(f)
	if !ok {
		return "", corrupt("copy thread: write field %q of checkpoint %q", f, id)
	}
	plain, err := s.open(ctx, writePlace(src, ns, id, task, idx, parts[0]), parts[2])
	if err != nil {
		return "", err
	}
	out, err := s.seal(ctx, writePlace(dst, ns, id, task, idx, parts[0]), plain)
	if err != nil {
		return "", err
	}
	return pack(parts[0], parts[1], out), nil
}

// resealBlobs rewrites in place the values of a page of blob field/value
// pairs as the copy writes them to thread dst.
func (s *Saver) resealBlobs(ctx context.Context, src, dst, ns string, pairs []any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		stored, _ := pairs[i+1].(string)
		if stored == "" || s.opts.Encryption == nil && !seal.IsSealed(stored) {
			continue // the empty marker (and the values hash's "#" marker), or a plain copy
		}
		field, _ := pairs[i].(string)
		n, rest, ok := cutLen(field)
		if !ok || n > len(rest) {
			return corrupt("copy thread: blob field %q", field)
		}
		ch, ver := rest[:n], rest[n:]
		plain, err := s.open(ctx, channelPlace(src, ns, ch, ver), stored)
		if err != nil {
			return err
		}
		if pairs[i+1], err = s.seal(ctx, channelPlace(dst, ns, ch, ver), plain); err != nil {
			return err
		}
	}
	return nil
}
