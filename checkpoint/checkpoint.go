package checkpoint

// Checkpoint is the state of a graph at one super-step.
type Checkpoint struct {
	// V is the format version. It round-trips unchanged.
	V int
	// ID identifies the checkpoint. IDs sort by creation time in byte order
	// (see NewID).
	ID string
	// TS is the creation time as the caller formatted it. It is opaque to
	// savers and round-trips byte for byte.
	TS string
	// ChannelValues maps a channel to its value. On read it is rebuilt from
	// ChannelVersions: a channel appears only if it has a version and a value
	// stored for that version.
	ChannelValues map[string]any
	// ChannelVersions maps a channel to its current version.
	ChannelVersions map[string]string
	// VersionsSeen maps a node to the channel versions it has seen. Keys may
	// be "".
	VersionsSeen map[string]map[string]string
	// UpdatedChannels lists the channels updated in this step (nil when
	// unknown).
	UpdatedChannels []string
}

// Metadata describes a checkpoint. Well-known keys are "source" ("input",
// "loop", "update", "fork"), "step" (an integer, -1 for the first input),
// "parents" (namespace to checkpoint ID) and "run_id"; any other key is kept
// as well. Values must be representable in JSON. Savers store metadata
// verbatim; numbers come back equal by value (integral numbers as int64,
// others as float64), objects as map[string]any and arrays as []any.
type Metadata map[string]any

// Write is one pending write of a task: a value for a channel.
type Write struct {
	Channel string
	Value   any
}

// PendingWrite is a Write as stored, with the task that produced it.
type PendingWrite struct {
	TaskID  string
	Channel string
	Value   any
}

// Tuple is a stored checkpoint with everything needed to resume from it.
type Tuple struct {
	// Config addresses the checkpoint itself (thread, namespace, its ID).
	Config     Config
	Checkpoint Checkpoint
	Metadata   Metadata
	// ParentConfig addresses the parent checkpoint, or is nil for a root
	// checkpoint (one put without a parent ID). It is set from the stored
	// parent ID even when that parent no longer exists.
	ParentConfig *Config
	// PendingWrites holds the writes stored against this checkpoint, ordered
	// by (task ID, index).
	PendingWrites []PendingWrite
}

// ListQuery selects checkpoints for Saver.List.
type ListQuery struct {
	// ThreadID restricts the listing to one thread; "" lists every thread of
	// the saver.
	ThreadID string
	// CheckpointNS restricts the listing to one namespace when non-nil; a
	// pointer to "" selects the root graph only. nil lists every namespace.
	CheckpointNS *string
	// CheckpointID, when non-empty, selects only that checkpoint.
	CheckpointID string
	// Before, when non-empty, keeps only checkpoints whose ID is strictly
	// less (byte order) than it.
	Before string
	// Filter keeps only checkpoints whose metadata has, for each key, a value
	// equal to the filter's (numbers by value, objects and arrays by deep
	// equality; a nil value matches a missing key).
	Filter Metadata
	// Limit caps the number of results, counted after filtering and ordering;
	// <= 0 means no limit.
	Limit int
}

// NS returns a pointer to ns, for ListQuery.CheckpointNS.
func NS(ns string) *string { return &ns }
