package redissaver

import (
	"context"

	"github.com/graphstate/redcheck/internal/codec"
)

// Checkpoint hash fields. A checkpoint is one hash: these header fields,
// "c:"+channel for each channel version, "m:"+key for each metadata key
// (canonical JSON), and "w:"+… for each pending write.
const (
	fieldV            = "v"  // format version, decimal
	fieldTS           = "ts" // timestamp, opaque
	fieldParent       = "p"  // parent checkpoint id, absent for a root
	fieldVersionsSeen = "s"  // versions seen, JSON
	fieldUpdated      = "u"  // updated channels, JSON, absent when nil
	fieldRunKey       = "r"  // run index key, absent without a run_id
	fieldToken        = "o"  // call token of the Put that wrote the hash
	prefixChannel     = "c:"
	prefixMetadata    = "m:"
	prefixWrite       = "w:"
	// valuesMarker is the field every namespace's values hash holds from
	// the namespace's first Put on ("" as its value): a namespace with
	// checkpoints and no values hash lost it. No blob field is "#".
	valuesMarker = "#"
)

// pack, unpack and cutLen are the shared length-prefixed encodings
// (functions, not variables holding them: the arguments of a call through a
// variable escape, which would put unpack's array on the heap).
func pack(parts ...string) string                   { return codec.Pack(parts...) }
func unpack(s string, parts []string) bool          { return codec.Unpack(s, parts) }
func cutLen(s string) (n int, rest string, ok bool) { return codec.CutLen(s) }

// encodeValue serializes a value to what is stored at p: pack(type, bytes),
// or its compressed form (storedValue), encrypted for p with encryption on.
func (s *Saver) encodeValue(ctx context.Context, p valuePlace, v any) (string, error) {
	typ, data, err := s.ser.DumpsTyped(v)
	if err != nil {
		return "", unserializable(err, "cannot serialize value of type %T", v)
	}
	if typ == "" {
		return "", invalidCheckpoint("serializer returned an empty type for %T", v)
	}
	return s.storedValue(ctx, p, typ, data)
}

// storedValue is the one place a value's stored form is made, for channel
// values and pending writes: pack(type, bytes), compressed when
// Options.Compression says so and it saves bytes, then encrypted for its
// place p when Options.Encryption is set. Without encryption it depends on
// the value only, not on where it is written.
func (s *Saver) storedValue(ctx context.Context, p valuePlace, typ string, data []byte) (string, error) {
	plain := codec.PackValue(typ, data)
	if c := s.opts.Compression; c.Enabled {
		plain = codec.Compress(plain, c.Level, c.MinBytes)
	}
	return s.seal(ctx, p, plain)
}

// decodeValue reverses encodeValue for a value read at p; it reads
// compressed and plain values whatever Options.Compression says.
func (s *Saver) decodeValue(ctx context.Context, p valuePlace, stored string) (any, error) {
	plain, err := s.open(ctx, p, stored)
	if err != nil {
		return nil, err
	}
	v, err := codec.LoadValue(s.ser, plain)
	if err != nil {
		return nil, corrupt("%v", err)
	}
	return v, nil
}
