package memsaver

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/graphstate/redcheck/checkpoint"
)

// Limits on the identifiers a Saver accepts.
const (
	// MaxIDLen is the longest checkpoint ID accepted, in bytes.
	MaxIDLen = 128
	// MaxNameLen is the longest thread ID or namespace accepted, in bytes.
	MaxNameLen = 4096
)

// Options configures a Saver.
type Options struct {
	// Serializer encodes channel values and write values. Default:
	// checkpoint.MsgpackSerializer{}.
	Serializer checkpoint.Serializer
}

// Saver is an in-memory checkpoint.Saver that also implements
// checkpoint.RunDeleter, checkpoint.ThreadCopier, checkpoint.Pruner and
// checkpoint.DeltaHistorian. It is safe for concurrent use: one mutex guards
// all its state.
type Saver struct {
	serde checkpoint.Serializer

	mu      sync.Mutex
	threads map[string]*thread
	// early holds the writes stored for checkpoints not put yet, which
	// their Put takes (LangGraph's runtime sends a step's writes while the
	// Put of its checkpoint is under way).
	early map[earlyKey]map[writeKey]storedWrite
}

// earlyKey names a checkpoint that writes were stored for before it existed.
type earlyKey struct{ thread, ns, id string }

var (
	_ checkpoint.Saver          = (*Saver)(nil)
	_ checkpoint.RunDeleter     = (*Saver)(nil)
	_ checkpoint.ThreadCopier   = (*Saver)(nil)
	_ checkpoint.Pruner         = (*Saver)(nil)
	_ checkpoint.DeltaHistorian = (*Saver)(nil)
)

// New returns an empty Saver.
func New(opts Options) *Saver {
	serde := opts.Serializer
	if serde == nil {
		serde = checkpoint.MsgpackSerializer{}
	}
	return &Saver{serde: serde, threads: map[string]*thread{}}
}

// NextVersion returns checkpoint.NextVersion(current).
func (s *Saver) NextVersion(current string) string {
	return checkpoint.NextVersion(current)
}

// thread holds the namespaces of one thread. A thread without checkpoints
// is removed, so a present thread always has at least one.
type thread struct {
	namespaces map[string]*namespace
}

// namespace holds the checkpoints and channel values of one (thread,
// namespace). A namespace without checkpoints is removed.
type namespace struct {
	checkpoints map[string]*record
	blobs       map[blobKey]blob
}

// blobKey addresses a channel value within a namespace.
type blobKey struct{ channel, version string }

// blob is a channel value as stored: the serializer's typed bytes, or the
// empty marker written for a channel listed in newVersions without a value.
type blob struct {
	typ   string
	data  []byte
	empty bool
}

// record is a stored checkpoint without its channel values, with its
// metadata (canonical JSON per key) and its pending writes.
type record struct {
	v        int
	id       string
	ts       string
	versions map[string]string
	seen     map[string]map[string]string
	updated  []string
	parentID string
	metadata map[string][]byte
	writes   map[writeKey]storedWrite
}

// writeKey identifies a pending write within a checkpoint.
type writeKey struct {
	taskID string
	idx    int
}

// storedWrite is a pending write as stored.
type storedWrite struct {
	channel  string
	taskPath string
	typ      string
	data     []byte
}

// namespaceOf returns the namespace (tid, ns), or nil.
func (s *Saver) namespaceOf(tid, ns string) *namespace {
	th := s.threads[tid]
	if th == nil {
		return nil
	}
	return th.namespaces[ns]
}

// latest returns the checkpoint of n with the greatest ID, or nil.
func (n *namespace) latest() *record {
	var best *record
	for _, r := range n.checkpoints {
		if best == nil || r.id > best.id {
			best = r
		}
	}
	return best
}

// find returns checkpoint id of n, or its latest checkpoint when id is "".
func (n *namespace) find(id string) *record {
	if n == nil {
		return nil
	}
	if id == "" {
		return n.latest()
	}
	return n.checkpoints[id]
}

// collectGarbage removes the blobs of n that no checkpoint of n references.
func (n *namespace) collectGarbage() {
	used := map[blobKey]bool{}
	for _, r := range n.checkpoints {
		for ch, ver := range r.versions {
			used[blobKey{ch, ver}] = true
		}
	}
	for k := range n.blobs {
		if !used[k] {
			delete(n.blobs, k)
		}
	}
}

// tidy removes the empty namespaces of thread tid, and the thread when none
// remains.
func (s *Saver) tidy(tid string) {
	th := s.threads[tid]
	if th == nil {
		return
	}
	for ns, n := range th.namespaces {
		if len(n.checkpoints) == 0 {
			delete(th.namespaces, ns)
		}
	}
	if len(th.namespaces) == 0 {
		delete(s.threads, tid)
	}
}

// sortedWrites returns the keys of writes in (task ID, index) order.
func sortedWrites(writes map[writeKey]storedWrite) []writeKey {
	keys := make([]writeKey, 0, len(writes))
	for k := range writes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b writeKey) int {
		return cmp.Or(cmp.Compare(a.taskID, b.taskID), cmp.Compare(a.idx, b.idx))
	})
	return keys
}

// checkName returns an error wrapping ErrInvalidConfig when the thread ID or
// namespace v is longer than MaxNameLen.
func checkName(what, v string) error {
	if len(v) > MaxNameLen {
		return fmt.Errorf("memsaver: %s is %d bytes, more than %d: %w", what, len(v), MaxNameLen, checkpoint.ErrInvalidConfig)
	}
	return nil
}

// checkConfigNames checks the thread ID and namespace of c.
func checkConfigNames(c checkpoint.Config) error {
	if err := checkName("thread id", c.ThreadID); err != nil {
		return err
	}
	return checkName("checkpoint namespace", c.CheckpointNS)
}

// validID reports whether id is a valid checkpoint ID: 1 to MaxIDLen bytes
// in 0x21..0x7e, none of % : { } * ? [ ] \.
func validID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < 0x21 || c > 0x7e {
			return false
		}
		switch c {
		case '%', ':', '{', '}', '*', '?', '[', ']', '\\':
			return false
		}
	}
	return true
}
