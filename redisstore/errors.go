package redisstore

import (
	"errors"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/redis/go-redis/v9"
)

// Sentinel errors. Every error the Store returns wraps one of them or a Redis
// error; match them with errors.Is.
var (
	// ErrInvalidOptions is returned by New for Options it cannot use. It
	// wraps checkpoint.ErrInvalidConfig.
	ErrInvalidOptions = fmt.Errorf("redisstore: invalid options: %w", checkpoint.ErrInvalidConfig)

	// ErrInvalidNamespace is returned for an empty namespace (where one is
	// required), an empty label, or a namespace beyond the size limits.
	ErrInvalidNamespace = errors.New("redisstore: invalid namespace")

	// ErrInvalidKey is returned for a key longer than MaxKeyLen bytes.
	ErrInvalidKey = errors.New("redisstore: invalid key")

	// ErrInvalidValue is returned by Put for a value JSON cannot represent
	// (a channel, a func, NaN, a cycle) or one nested deeper than
	// MaxValueDepth.
	ErrInvalidValue = errors.New("redisstore: invalid value")

	// ErrInvalidFilter is returned by Search for a malformed filter: an
	// unknown operator, an operator map mixed with plain fields, a range
	// operator on something other than a number or a string, an empty path.
	ErrInvalidFilter = errors.New("redisstore: invalid filter")

	// ErrInvalidArgument is returned for other bad arguments: a negative
	// Limit, Offset, MaxDepth or TTL, a Limit or Offset above its cap
	// (MaxSearchLimit, MaxSearchOffset, MaxListLimit, MaxListOffset), a
	// malformed field path, an unknown Refresh value.
	ErrInvalidArgument = errors.New("redisstore: invalid argument")

	// ErrNotFound is returned by Get when no live item has the namespace and
	// key. It wraps checkpoint.ErrNotFound.
	ErrNotFound = fmt.Errorf("redisstore: item not found: %w", checkpoint.ErrNotFound)

	// ErrNoEmbedder is no longer returned: a Search with a query on a store
	// without an Embedder ignores the query, as LangGraph does.
	//
	// Deprecated: kept so that code matching it still compiles.
	ErrNoEmbedder = errors.New("redisstore: query search needs an Embedder")

	// ErrEmbedding is returned when the Embedder fails or returns vectors of
	// the wrong number, length or content (NaN or infinite components). It
	// wraps the embedder's own error, if any.
	ErrEmbedding = errors.New("redisstore: embedding failed")

	// ErrDecrypt is returned, with encryption at rest (Options.Encryption),
	// for an item value that cannot be answered: one that fails to open (a
	// value altered, moved by hand to another namespace or key, or sealed
	// with a key the ring lacks), a plaintext value when ReadPlaintext is
	// off, or an encrypted value read by a store without a keyring. It wraps
	// checkpoint.ErrDecrypt (and so checkpoint.ErrSerialization); the error
	// names the item and the key id, never a byte of the value.
	ErrDecrypt = fmt.Errorf("redisstore: %w", checkpoint.ErrDecrypt)

	// ErrCorrupt is returned when data read from Redis does not have the
	// shape the store writes (a hand-edited key, say). It wraps
	// checkpoint.ErrSerialization.
	ErrCorrupt = fmt.Errorf("redisstore: corrupt stored data: %w", checkpoint.ErrSerialization)
)

func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// redisErr wraps an error from Redis with the operation that met it: a
// script's DATALOSS (a key that should exist and does not) as
// checkpoint.ErrDataLoss.
func redisErr(op string, err error) error {
	if redis.HasErrorPrefix(err, "DATALOSS") {
		return fmt.Errorf("redisstore: %s: %w: %v", op, checkpoint.ErrDataLoss, err)
	}
	return fmt.Errorf("redisstore: %s: %w", op, err)
}
