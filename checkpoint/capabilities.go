package checkpoint

import "context"

// RunDeleter is implemented by savers that can delete the checkpoints of
// runs.
type RunDeleter interface {
	// DeleteForRuns deletes every checkpoint, in every thread and namespace,
	// whose metadata "run_id" is one of runIDs, together with its pending
	// writes. Empty and unknown run IDs are no-ops.
	DeleteForRuns(ctx context.Context, runIDs []string) error
}

// ThreadCopier is implemented by savers that can copy a thread.
type ThreadCopier interface {
	// CopyThread copies every checkpoint of the source thread, in every
	// namespace, with its ID, parent link, metadata, channel values and
	// pending writes, to the target thread. The source is unchanged.
	CopyThread(ctx context.Context, sourceThreadID, targetThreadID string) error
}

// PruneStrategy tells Pruner.Prune what to keep.
type PruneStrategy string

const (
	// PruneKeepLatest keeps the newest checkpoint of each namespace of a
	// thread, with everything needed to read it back whole.
	PruneKeepLatest PruneStrategy = "keep_latest"
	// PruneDelete removes the threads entirely.
	PruneDelete PruneStrategy = "delete"
)

// Pruner is implemented by savers that can prune the history of threads.
type Pruner interface {
	// Prune applies strategy to each thread of threadIDs. An empty list and
	// unknown threads are no-ops.
	Prune(ctx context.Context, threadIDs []string, strategy PruneStrategy) error
}

// DeltaHistory is the history of one delta channel, as returned by
// DeltaHistorian.
type DeltaHistory struct {
	// Writes holds the writes to the channel from the seed checkpoint (its
	// own writes included) up to the target's parent, oldest first; within a
	// checkpoint by (task ID, index).
	Writes []PendingWrite
	// Seed is the channel value of the nearest ancestor that holds one (a
	// DeltaSnapshot or a plain value, as stored).
	Seed any
	// HasSeed is false when the walk reached the root without a seed.
	HasSeed bool
}

// DeltaHistorian is implemented by savers that can reconstruct delta
// channels.
type DeltaHistorian interface {
	// DeltaChannelHistory walks from the parent of the checkpoint cfg up the
	// parent chain and returns, for each of channels, the writes since the
	// nearest ancestor holding a value for it. No channels gives an empty
	// map.
	DeltaChannelHistory(ctx context.Context, cfg Config, channels []string) (map[string]DeltaHistory, error)
}
