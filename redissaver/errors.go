package redissaver

import (
	"fmt"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/redis/go-redis/v9"
)

// ErrInvalidOptions is returned by New for Options it cannot use. It wraps
// checkpoint.ErrInvalidConfig.
var ErrInvalidOptions = fmt.Errorf("redissaver: invalid options: %w", checkpoint.ErrInvalidConfig)

// ErrCorrupt is returned when data read from Redis does not have the shape
// redcheck writes (a hand-edited key, say). It wraps
// checkpoint.ErrSerialization.
var ErrCorrupt = fmt.Errorf("redissaver: corrupt stored data: %w", checkpoint.ErrSerialization)

// ErrPrefixReset is answered by the call that finds the saver's prefix
// emptied (Redis restarted without persistence, FLUSHALL, a failover to an
// empty replica): every checkpoint it held is lost, and the saver created
// the prefix again, so later calls work on an empty prefix. It wraps
// checkpoint.ErrDataLoss (docs/operations.md, "Redis restarted empty").
var ErrPrefixReset = fmt.Errorf("redissaver: the prefix was emptied and created again: %w", checkpoint.ErrDataLoss)

func invalidOptions(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...))
}

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("redissaver: %w: %s", checkpoint.ErrInvalidConfig, fmt.Sprintf(format, args...))
}

func invalidCheckpoint(format string, args ...any) error {
	return fmt.Errorf("redissaver: %w: %s", checkpoint.ErrInvalidCheckpoint, fmt.Sprintf(format, args...))
}

// unserializable reports a value the serializer refuses: both
// checkpoint.ErrInvalidCheckpoint (nothing was stored) and
// checkpoint.ErrSerialization (why), with the serializer's error wrapped.
func unserializable(err error, format string, args ...any) error {
	return fmt.Errorf("redissaver: %w: %s: %w: %w", checkpoint.ErrInvalidCheckpoint, fmt.Sprintf(format, args...), checkpoint.ErrSerialization, err)
}

func notFound(format string, args ...any) error {
	return fmt.Errorf("redissaver: %w: %s", checkpoint.ErrNotFound, fmt.Sprintf(format, args...))
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// redisErr wraps an error from Redis with the operation that met it.
func redisErr(op string, err error) error {
	return fmt.Errorf("redissaver: %s: %w", op, err)
}

func dataLoss(format string, args ...any) error {
	return fmt.Errorf("redissaver: %w: %s", checkpoint.ErrDataLoss, fmt.Sprintf(format, args...))
}

// scriptErr turns the error a script raised into the package's errors: the
// script error codes of docs/storage-format.md get their sentinel, anything
// else is the Redis error, wrapped with the operation.
func scriptErr(op string, err error) error {
	switch {
	case redis.HasErrorPrefix(err, "DATALOSS"):
		return dataLoss("%s: %s is missing", op, strings.TrimPrefix(err.Error(), "DATALOSS "))
	case redis.HasErrorPrefix(err, "CYCLE"):
		return dataLoss("%s: %s", op, strings.TrimPrefix(err.Error(), "CYCLE "))
	case redis.HasErrorPrefix(err, "REPARENT"):
		return invalidCheckpoint("%s", strings.TrimPrefix(err.Error(), "REPARENT "))
	case redis.HasErrorPrefix(err, "NOCHECKPOINT"):
		return invalidCheckpoint("%s", strings.TrimPrefix(err.Error(), "NOCHECKPOINT "))
	case redis.HasErrorPrefix(err, "NOTFOUND"):
		return notFound("%s", strings.TrimPrefix(err.Error(), "NOTFOUND "))
	}
	return redisErr(op, err)
}
