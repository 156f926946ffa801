package checkpoint

// Config addresses a checkpoint: a thread, a namespace inside it, and a
// checkpoint ID. Its meaning depends on the call:
//
//   - Saver.Put: CheckpointID is the PARENT of the checkpoint being stored
//     ("" for a root checkpoint).
//   - Saver.GetTuple: CheckpointID is the exact checkpoint to read; "" reads
//     the latest one.
//   - Saver.PutWrites: CheckpointID is the checkpoint the writes belong to.
type Config struct {
	ThreadID     string
	CheckpointNS string // "" is the root graph
	CheckpointID string
}

// WithID returns a copy of c whose CheckpointID is id.
func (c Config) WithID(id string) Config {
	c.CheckpointID = id
	return c
}
