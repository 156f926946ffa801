package checkpoint

import (
	"context"
	"iter"
)

// Saver stores and reads checkpoints. Implementations are safe for
// concurrent use.
type Saver interface {
	// Put stores cp in the thread and namespace of cfg, with cfg.CheckpointID
	// as its parent, and returns the Config of the stored checkpoint. Only the
	// channels in newVersions have their values written. Putting an ID that
	// already exists overwrites its checkpoint and metadata and keeps its
	// pending writes. A missing ThreadID gives an error wrapping
	// ErrInvalidConfig.
	Put(ctx context.Context, cfg Config, cp Checkpoint, md Metadata, newVersions map[string]string) (Config, error)

	// PutWrites stores writes of the task taskID against the checkpoint
	// cfg.CheckpointID. A write's index is its position in writes, or the
	// fixed negative index of a special channel (see WriteIndex). Regular
	// writes are insert-if-absent; special channels overwrite. A missing
	// ThreadID or CheckpointID gives an error wrapping ErrInvalidConfig.
	PutWrites(ctx context.Context, cfg Config, writes []Write, taskID, taskPath string) error

	// GetTuple reads the checkpoint cfg.CheckpointID, or the latest one of
	// the thread and namespace when it is "". It returns an error wrapping
	// ErrNotFound when there is no such checkpoint (never the latest in place
	// of a missing ID) and when cfg.ThreadID is "".
	GetTuple(ctx context.Context, cfg Config) (*Tuple, error)

	// List yields the checkpoints selected by q, newest ID first. An error
	// ENDS the listing: it is yielded once, with a nil tuple, and nothing
	// follows it, so a loop returns on it (unlike stream's Subscribe, whose
	// errors are transient).
	List(ctx context.Context, q ListQuery) iter.Seq2[*Tuple, error]

	// DeleteThread removes every checkpoint, write and channel value of the
	// thread, in every namespace. Deleting an unknown thread is a no-op.
	DeleteThread(ctx context.Context, threadID string) error

	// NextVersion returns the channel version that follows current ("" for a
	// channel without a version). Versions sort in byte order.
	NextVersion(current string) string
}
