package checkpoint

// Config addresses a checkpoint: a thread, a namespace inside it, and a
// checkpoint ID. Its meaning depends on the call:
//
//   - Saver.Put: CheckpointID is the parent of the checkpoint being stored
//     ("" for a root checkpoint); build it with Parent or Root.
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

// Parent returns the Config to pass to Saver.Put to store a child of the
// checkpoint c addresses: a Config returned by Put, or a Tuple's Config. In
// Put, a Config's CheckpointID names the parent of the checkpoint stored
// (where GetTuple reads the checkpoint it names); Parent, which returns c as
// it is, makes the call say so:
//
//	stored, err := saver.Put(ctx, checkpoint.Parent(prev), next, md, newVersions)
//
// Use Root for the first checkpoint of a thread.
func Parent(c Config) Config { return c }

// Root returns the Config to pass to Saver.Put to store a checkpoint without
// a parent (the first of a thread) in the thread threadID and the namespace
// ns ("" for the root graph).
func Root(threadID, ns string) Config {
	return Config{ThreadID: threadID, CheckpointNS: ns}
}
