package checkpoint

import "errors"

var (
	// ErrNotFound is returned when a checkpoint does not exist.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrInvalidConfig is returned when a Config lacks a required field or
	// holds a value a saver refuses (an over-long thread ID, say).
	ErrInvalidConfig = errors.New("checkpoint: invalid config")
	// ErrInvalidCheckpoint is returned when a checkpoint, its metadata or a
	// write cannot be stored as given (a malformed ID, metadata that is not
	// JSON, a value the serializer cannot encode).
	ErrInvalidCheckpoint = errors.New("checkpoint: invalid checkpoint")
	// ErrSerialization is returned when stored bytes cannot be decoded, or a
	// value cannot be encoded.
	ErrSerialization = errors.New("checkpoint: serialization failed")
)
