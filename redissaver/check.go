package redissaver

import (
	"context"
	"fmt"
	"strings"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/meta"
)

// Kinds of Violation. The first group are violations: redcheck's scripts
// never leave them behind, whatever fails or crashes meanwhile, so each one
// means lost or corrupted data (or a key edited by hand). The second group
// are notes: states that redcheck creates on purpose, reported apart.
const (
	// KindMissingCheckpoint: an index entry (namespace index, thread index,
	// shard index or run index) names a checkpoint hash that does not exist.
	KindMissingCheckpoint = "missing checkpoint"
	// KindMissingIndexEntry: a checkpoint is absent from one of its indexes,
	// its namespace from the thread's namespace set, or its thread from the
	// shard's registry.
	KindMissingIndexEntry = "missing index entry"
	// KindMissingBlob: a channel version of a checkpoint points to no value
	// in the namespace's blobs hash (not even the empty marker "").
	KindMissingBlob = "missing blob"
	// KindBadValue: a stored channel value does not decode.
	KindBadValue = "bad value"
	// KindBadWrite: a pending write's field or value does not decode.
	KindBadWrite = "bad write"
	// KindBadCheckpoint: a checkpoint hash lacks its format version (writes
	// without a checkpoint) or holds a header, metadata or run field that
	// does not parse.
	KindBadCheckpoint = "bad checkpoint"
	// KindBadEntry: an index or registry member that does not parse, or that
	// sits in the wrong shard.
	KindBadEntry = "bad entry"
	// KindStaleEntry: the registry or a namespace set names a thread or
	// namespace without checkpoints, or a run index names a checkpoint that
	// now belongs to another run.
	KindStaleEntry = "stale entry"
	// KindLostKey: a thread's head is missing while its registry entry
	// remains (or the reverse): what reads report as checkpoint.ErrDataLoss.
	KindLostKey = "lost key"

	// KindDanglingParent (a note): a checkpoint's parent does not exist in
	// its thread and namespace. DeleteForRuns and Prune create these on
	// purpose: a child keeps naming the parent they deleted.
	KindDanglingParent = "dangling parent"
	// KindExpired (a note): with Options.TTL, an entry that names a
	// checkpoint, namespace or thread that expired. Expiry removes a
	// checkpoint before the index entries that name it (readers sweep them
	// lazily), and a run index can expire before a checkpoint whose TTL a
	// PutWrites or a read refreshed, so with a TTL these are expected. The
	// Detail starts with the kind the entry would have without a TTL.
	KindExpired = "expired"
)

// Violation is one finding of Check: what is wrong (Kind, one of the Kind
// constants), where (Thread, Namespace and CheckpointID, as far as they
// apply; Thread is "" for a shard-wide finding) and the particulars.
type Violation struct {
	Kind, Thread, Namespace, CheckpointID, Detail string
}

// String formats the violation on one line, e.g.
// `missing blob: thread "t1" ns "" checkpoint 1f0a…: channel "messages" version "3"`.
func (v Violation) String() string {
	var b strings.Builder
	b.WriteString(v.Kind)
	b.WriteString(":")
	if v.Thread != "" {
		fmt.Fprintf(&b, " thread %q ns %q", v.Thread, v.Namespace)
	}
	if v.CheckpointID != "" {
		fmt.Fprintf(&b, " checkpoint %s", v.CheckpointID)
	}
	if v.Detail != "" {
		if v.Thread != "" || v.CheckpointID != "" {
			b.WriteString(":")
		}
		b.WriteString(" ")
		b.WriteString(v.Detail)
	}
	return b.String()
}

// CheckResult is what Verify found and how much it examined.
type CheckResult struct {
	Violations []Violation // lost or corrupted data; empty for a sound store
	Notes      []Violation // dangling parents, and expired entries with a TTL

	Threads     int // threads examined
	Checkpoints int // checkpoint hashes examined
	Writes      int // pending writes decoded
	Values      int // channel values looked up (each distinct one decoded once)
	Entries     int // shard and run index entries examined
}

// checkPage is the page size of the shard-wide indexes, and checkBatch the
// page size of one thread's indexes, values and checkpoints: each script
// call of a check does bounded work.
const (
	checkPage  = 128
	checkBatch = 64
)

// Verify checks the stored data of one thread, or of every thread when
// threadID is "" (found through the shards' thread registries and shard
// indexes, never by scanning keys). It verifies that
//
//   - each entry of a namespace index, thread index, shard index and run
//     index has its checkpoint hash;
//   - each checkpoint is in all its indexes, its namespace in the thread's
//     namespace set and its thread in the shard's registry, and the
//     registry and namespace sets name nothing else;
//   - each value a checkpoint's channel versions point to exists (or is the
//     empty marker "") and decodes, and each checkpoint's header, metadata
//     and pending writes decode;
//   - each parent link resolves within the thread and namespace, or else is
//     reported as a note (KindDanglingParent), not a violation.
//
// A thread is read in bounded pages, one script each, in an order that
// concurrent Puts and PutWrites cannot turn into a false finding. A
// concurrent Prune, DeleteForRuns or CopyThread can delete what one page
// named before the next reads it, so a thread whose read finds a violation
// is read again, three times at most, and only what every read finds is
// reported: lost data is found by every read, a deletion during one read
// is not found by the next. Each page of a shard-wide index is checked
// against the checkpoints it names by one script. So Verify reports nothing
// for a sound store even while other clients write and delete (the chaos
// test checks it so). It writes nothing. It reads every checkpoint and
// value of the threads it checks, in pages of at most 64 checkpoints,
// members or values, plus one page per 128 shard index entries; a thread
// with findings is read up to twice more. Checking one thread also walks
// its whole shard index (to find entries of that thread).
// Run indexes are found through the checkpoints that name them: a run index
// no checkpoint names any more is not checked. The event streams are not
// checked.
//
// Errors: checkpoint.ErrInvalidConfig for an over-long thread ID; otherwise
// the Redis error, wrapped.
func (s *Saver) Verify(ctx context.Context, threadID string) (res *CheckResult, err error) {
	ctx, call := s.begin(ctx, opVerify)
	defer func() {
		if res != nil {
			call.set(attrViolations.Int(len(res.Violations)))
			call.set(attrCheckpoints.Int(res.Checkpoints))
			call.violations(res)
		}
		call.end(err)
	}()
	call.address(threadID, "", "")
	c := &checker{s: s, ctx: ctx, res: &CheckResult{}, expiring: s.opts.TTL > 0, reported: map[Violation]bool{}}
	if threadID != "" {
		if err := keys.ValidateThreadID(threadID); err != nil {
			return nil, invalidConfig("%v", err)
		}
		n, enct := s.layout.Shard(threadID), keys.Encode(threadID)
		if err := c.shard(ctx, n, []string{enct}, enct); err != nil {
			return nil, err
		}
		return c.res, c.d.err
	}
	for n := range s.layout.Shards() {
		var threads []string
		marker := false
		for cursor := ""; ; {
			items, next, err := c.page(ctx, n, s.layout.Threads(n), "threads", cursor, "")
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				enct := c.d.str(it)
				if enct == meta.RegistryMarker {
					marker = true
					continue
				}
				if th, err := keys.Decode(enct); err != nil {
					c.add(KindBadEntry, "", "", "", fmt.Sprintf("registry of shard %d: member %q is no encoded thread id", n, enct))
					continue
				} else if sh := s.layout.Shard(th); sh != n {
					c.add(KindBadEntry, th, "", "", fmt.Sprintf("in the registry of shard %d, but the thread belongs to shard %d", n, sh))
					continue
				}
				threads = append(threads, enct)
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		if !marker {
			c.add(KindLostKey, "", "", "", fmt.Sprintf("the registry of shard %d (%s) lacks its marker member: it was lost whole", n, s.layout.Threads(n)))
		}
		if err := c.shard(ctx, n, threads, ""); err != nil {
			return nil, err
		}
	}
	if c.d.err != nil {
		return nil, c.d.err
	}
	return c.res, nil
}
