package keys

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// DefaultShards is the number of shards of a Layout when none is given.
const DefaultShards = 16

// MaxShards bounds the number of shards (the number of Cluster slots).
const MaxShards = 16384

// Layout builds the keys of one prefix.
type Layout struct {
	prefix string
	shards int
}

// New returns the layout of prefix with the given number of shards (0 means
// DefaultShards). The prefix must be non-empty, at most 128 bytes, and hold
// no '{', '}' or control bytes.
func New(prefix string, shards int) (Layout, error) {
	if prefix == "" || len(prefix) > 128 {
		return Layout{}, fmt.Errorf("%w: prefix must be 1 to 128 bytes", ErrInvalid)
	}
	for i := 0; i < len(prefix); i++ {
		if c := prefix[i]; c == '{' || c == '}' || c < 0x21 || c == 0x7f {
			return Layout{}, fmt.Errorf("%w: prefix %q holds %q", ErrInvalid, prefix, c)
		}
	}
	if shards == 0 {
		shards = DefaultShards
	}
	if shards < 1 || shards > MaxShards {
		return Layout{}, fmt.Errorf("%w: shards must be 1 to %d", ErrInvalid, MaxShards)
	}
	return Layout{prefix: prefix, shards: shards}, nil
}

// Prefix returns the layout's prefix.
func (l Layout) Prefix() string { return l.prefix }

// Shards returns the number of shards.
func (l Layout) Shards() int { return l.shards }

// Shard returns the shard of a thread: FNV-1a (32 bit) of the thread ID
// modulo the number of shards.
func (l Layout) Shard(threadID string) int {
	h := fnv.New32a()
	h.Write([]byte(threadID))
	return int(h.Sum32() % uint32(l.shards))
}

// ShardBase is the start of every key of shard n: "P:{n}:".
func (l Layout) ShardBase(n int) string {
	return l.prefix + ":{" + strconv.Itoa(n) + "}:"
}

// FormatVersion is the version of the storage format this package lays
// out (docs/storage-format.md). It is written to the prefix's meta key.
const FormatVersion = 3

// Meta is the prefix's meta hash: "format" (FormatVersion) and "shards".
// It carries no hash tag: it is read once, at New, by every package.
func (l Layout) Meta() string { return l.prefix + ":meta" }

// Threads is the shard's thread registry: a zset of encoded thread IDs
// scored by their lease deadline (Unix milliseconds; 0 for no TTL).
func (l Layout) Threads(n int) string { return l.ShardBase(n) + "threads" }

// All is the shard's index of every checkpoint (zset of Member values).
func (l Layout) All(n int) string { return l.ShardBase(n) + "all" }

// Run is the shard's set of the checkpoints of one run (Member values).
func (l Layout) Run(n int, runID string) string { return l.ShardBase(n) + "run:" + Encode(runID) }

// GC is the shard's queue of generations to reclaim: a zset of
// Encode(thread) "\x00" generation, scored by the time (Unix ms) from which
// they may be reclaimed.
func (l Layout) GC(n int) string { return l.ShardBase(n) + "gc" }

// ThreadBase is the start of every key of a thread, and the thread's head
// hash itself: "P:{n}:t:T", with fields "g" (the current generation) and
// "exp" (the lease deadline, Unix ms; 0 for no TTL).
func (l Layout) ThreadBase(threadID string) string {
	return l.ShardBase(l.Shard(threadID)) + "t:" + Encode(threadID)
}

// Head is the thread's head hash (the same key as ThreadBase).
func (l Layout) Head(threadID string) string { return l.ThreadBase(threadID) }

// The fields of a thread's head hash.
const (
	HeadGeneration = "g"   // the thread's live generation
	HeadLease      = "exp" // the lease deadline, Unix ms; "0" (or absent) for none
)

// GenBase is the start of every data key of one generation of a thread:
// "P:{n}:t:T:g:G".
func (l Layout) GenBase(threadID, gen string) string {
	return l.ThreadBase(threadID) + ":g:" + gen
}

// Namespaces is the set of the encoded namespaces of a generation.
func (l Layout) Namespaces(threadID, gen string) string { return l.GenBase(threadID, gen) + ":ns" }

// NamespaceBase is the start of every key of (thread, generation, ns):
// "P:{n}:t:T:g:G:n:NS".
func (l Layout) NamespaceBase(threadID, gen, ns string) string {
	return l.GenBase(threadID, gen) + ":n:" + Encode(ns)
}

// Index is the zset of the checkpoint IDs of (thread, generation, ns).
func (l Layout) Index(threadID, gen, ns string) string {
	return l.NamespaceBase(threadID, gen, ns) + ":idx"
}

// Blobs is the hash of the channel values of (thread, generation, ns).
func (l Layout) Blobs(threadID, gen, ns string) string {
	return l.NamespaceBase(threadID, gen, ns) + ":blobs"
}

// Checkpoint is the hash of one checkpoint.
func (l Layout) Checkpoint(threadID, gen, ns, id string) string {
	return l.NamespaceBase(threadID, gen, ns) + ":cp:" + id
}

// ParseCheckpointKey reverses Checkpoint: it returns the thread, namespace
// and ID of a checkpoint key of this layout, and an error wrapping
// ErrMalformed for any other string.
func (l Layout) ParseCheckpointKey(key string) (threadID, ns, id string, err error) {
	rest, ok := strings.CutPrefix(key, l.prefix+":{")
	if !ok {
		return "", "", "", fmt.Errorf("%w: %q lacks the prefix", ErrMalformed, key)
	}
	shard, rest, ok := strings.Cut(rest, "}:t:")
	if !ok {
		return "", "", "", fmt.Errorf("%w: %q is no thread key", ErrMalformed, key)
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 7 || parts[1] != "g" || ValidateGen(parts[2]) != nil || parts[3] != "n" || parts[5] != "cp" {
		return "", "", "", fmt.Errorf("%w: %q is no checkpoint key", ErrMalformed, key)
	}
	if threadID, err = Decode(parts[0]); err != nil {
		return "", "", "", err
	}
	if ns, err = Decode(parts[4]); err != nil {
		return "", "", "", err
	}
	id = parts[6]
	if err = ValidateID(id); err != nil {
		return "", "", "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if strconv.Itoa(l.Shard(threadID)) != shard {
		return "", "", "", fmt.Errorf("%w: %q is in the wrong shard", ErrMalformed, key)
	}
	return threadID, ns, id, nil
}

// ThreadIndex is the zset of every checkpoint of a generation of a thread:
// id \0 Encode(ns).
func (l Layout) ThreadIndex(threadID, gen string) string { return l.GenBase(threadID, gen) + ":idx" }

// Events is the thread's event stream: one entry per write that changed the
// thread, appended by the script that made it.
func (l Layout) Events(threadID string) string { return l.ThreadBase(threadID) + ":events" }

// Feed is the shard's event stream: the events of every thread of the shard,
// appended by the same scripts. Reading the feeds of all shards gives every
// event of the prefix.
func (l Layout) Feed(n int) string { return l.ShardBase(n) + "feed" }

// Early is the hash of the pending writes a PutWrites stored for checkpoint
// id of the thread's namespace ns before that checkpoint existed; the Put
// that stores the checkpoint takes it.
func (l Layout) Early(threadID, ns, id string) string {
	return l.ThreadBase(threadID) + ":early:" + Encode(ns) + ":" + id
}

// EarlyIndex is the shard's registry of early writes: member Encode(thread)
// \0 Encode(ns) \0 id, score the Unix ms from which they may be reclaimed.
func (l Layout) EarlyIndex(n int) string { return l.ShardBase(n) + "early" }

// layoutOf returns the layout of a value whose package registered it (the
// saver of redissaver, from its init): tests and the tools of this module
// inspect raw keys through Of. It is not public API.
var layoutOf func(any) (Layout, bool)

// RegisterLayoutOf sets the function Of asks.
func RegisterLayoutOf(f func(any) (Layout, bool)) { layoutOf = f }

// Of returns the key layout of v, a saver of this module. It panics when v
// has none: a bug of the calling test or tool.
func Of(v any) Layout {
	if layoutOf != nil {
		if l, ok := layoutOf(v); ok {
			return l
		}
	}
	panic(fmt.Sprintf("keys: no layout registered for %T", v))
}
