package checkpoint

import (
	"errors"
	"fmt"
)

// The error set of the module: every error a redcheck package returns wraps
// one of these sentinels (or is a Redis error), and each package's own
// sentinels refine them (redissaver.ErrCorrupt wraps ErrSerialization,
// redissaver.ErrPrefixReset wraps ErrDataLoss, the packages' ErrInvalidOptions
// wrap ErrInvalidConfig, redisstore.ErrNotFound wraps ErrNotFound, ...), so
// that errors.Is with these five answers across the module.
var (
	// ErrNotFound is returned when a checkpoint does not exist.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrInvalidConfig is returned when a Config lacks a required field or
	// holds a value a saver refuses (an over-long thread ID, say).
	ErrInvalidConfig = errors.New("checkpoint: invalid config")
	// ErrInvalidCheckpoint is returned when a checkpoint, its metadata or a
	// write cannot be stored as given (a malformed ID, metadata that is not
	// JSON, a value the serializer cannot encode), before anything is
	// written.
	ErrInvalidCheckpoint = errors.New("checkpoint: invalid checkpoint")
	// ErrSerialization is returned when a value cannot be encoded or stored
	// bytes cannot be decoded. Serializers wrap it (with %w) in every error
	// they return; a saver that cannot encode a value it was given returns
	// an error wrapping both ErrInvalidCheckpoint (nothing was stored) and
	// ErrSerialization (why), and one that cannot decode what it reads back
	// wraps ErrSerialization.
	ErrSerialization = errors.New("checkpoint: serialization failed")
	// ErrDataLoss is returned when data that should exist does not: a
	// checkpoint its index names, a value its channel version points to, a
	// thread's head or index. Eviction, a manual deletion or a bug removed
	// it. A saver never answers such a read with partial, older or empty
	// state; the error's message names what is missing. Expiry by TTL is not
	// loss: an expired thread reads as ErrNotFound.
	ErrDataLoss = errors.New("checkpoint: data loss")

	// ErrDecrypt is returned, with encryption at rest on (a Keyring), for
	// a stored value that cannot be opened: one altered (a flipped bit),
	// moved from another place (another thread, namespace, channel,
	// version, checkpoint, task or write index), sealed with a key id the
	// keyring does not hold, or malformed; and for a plaintext value read
	// by a saver that requires encryption (without its migration option).
	// A saver never answers such a value as state. Its message names the
	// place and the key id, never a byte of the value. It wraps
	// ErrSerialization.
	ErrDecrypt = fmt.Errorf("checkpoint: cannot decrypt a stored value: %w", ErrSerialization)
)
