package redissaver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/graphstate/redcheck/internal/keys"
	mb "github.com/graphstate/redcheck/internal/member"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// checker accumulates the findings of one Verify call.
type checker struct {
	d        reply // the script replies, decoded strictly
	s        *Saver
	ctx      context.Context // of the check: a keyring may fetch keys
	res      *CheckResult
	expiring bool // the saver has a TTL: expired entries are notes
	reported map[Violation]bool
}

// nsNotInSet is the detail of a namespace missing from the namespace set.
const nsNotInSet = "the namespace has checkpoints but is not in the thread's namespace set"

// add records a finding once, however many passes make it.
func (c *checker) add(kind, thread, ns, id, detail string) {
	v := Violation{Kind: kind, Thread: thread, Namespace: ns, CheckpointID: id, Detail: detail}
	if c.reported[v] {
		return
	}
	c.reported[v] = true
	if kind == KindDanglingParent || kind == KindExpired {
		c.res.Notes = append(c.res.Notes, v)
		return
	}
	c.res.Violations = append(c.res.Violations, v)
}

// lost reports an entry naming what does not exist: a violation, or a note
// when the saver has a TTL (expiry explains it).
func (c *checker) lost(kind, thread, ns, id, detail string) {
	if c.expiring {
		kind, detail = KindExpired, kind+": "+detail
	}
	c.add(kind, thread, ns, id, detail)
}

// shard checks the threads (encoded) of shard n, then the shard index and
// the run indexes their checkpoints name, restricted to the entries of the
// thread only when only is not "". Threads that have entries in the shard
// index but are missing from the registry are checked as well.
func (c *checker) shard(ctx context.Context, n int, threads []string, only string) error {
	seen := map[string]bool{}
	runs := map[string]bool{}
	if err := c.threads(ctx, n, threads, seen, runs); err != nil {
		return err
	}
	var unregistered []string
	for cursor := ""; ; {
		items, next, err := c.page(ctx, n, c.s.layout.All(n), "all", cursor, only)
		if err != nil {
			return err
		}
		for _, it := range items {
			if enct := c.indexEntry(n, it, "the shard index", ""); enct != "" && !seen[enct] {
				seen[enct] = true
				unregistered = append(unregistered, enct)
			}
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if err := c.threads(ctx, n, unregistered, seen, runs); err != nil {
		return err
	}
	for _, run := range slices.Sorted(maps.Keys(runs)) {
		// SSCAN pages may repeat a member: each is checked once.
		done := map[string]bool{}
		for cursor := ""; ; {
			items, next, err := c.page(ctx, n, run, "run", cursor, only)
			if err != nil {
				return err
			}
			for _, it := range items {
				if m := c.d.str(c.d.list(it)[0]); !done[m] {
					done[m] = true
					c.indexEntry(n, it, "run index "+strconv.Quote(run), run)
				}
			}
			if cursor = next; cursor == "" {
				break
			}
		}
	}
	return nil
}

// indexEntry checks one item of check_shard.lua for a shard or run index
// (run is the run index key, "" for the shard index). It returns the
// encoded thread of an entry whose checkpoint exists while its thread is
// not in the registry, else "".
func (c *checker) indexEntry(n int, item any, index, run string) string {
	c.res.Entries++
	f := c.d.list(item)
	if len(f) != 7 {
		c.add(KindBadEntry, "", "", "", fmt.Sprintf("%s: reply item of %T", index, item))
		return ""
	}
	member, exists := c.d.str(f[0]), c.d.num(f[1])
	id, th, ns, gen, err := mb.Parse(member)
	if exists == -2 && err == nil {
		c.add(KindStaleEntry, th, ns, id, fmt.Sprintf("%s names generation %q, neither the thread's current one nor queued for reclaim", index, gen))
		return ""
	}
	if exists < 0 || err != nil {
		c.add(KindBadEntry, "", "", "", fmt.Sprintf("%s of shard %d: member %q is not id \\0 thread \\0 namespace", index, n, member))
		return ""
	}
	if sh := c.s.layout.Shard(th); sh != n {
		c.add(KindBadEntry, th, ns, id, fmt.Sprintf("%s of shard %d names it, but the thread belongs to shard %d", index, n, sh))
		return ""
	}
	if exists == 0 {
		c.lost(KindMissingCheckpoint, th, ns, id, "named by "+index)
		return ""
	}
	if run != "" && c.d.optStr(f[2]) != run {
		c.add(KindStaleEntry, th, ns, id, fmt.Sprintf("%s names it, but it belongs to run index %q", index, c.d.optStr(f[2])))
	}
	// The same findings as the thread's own check, for a checkpoint that
	// pass cannot reach (named by none of the thread's indexes).
	if c.d.num(f[4]) == 0 {
		c.add(KindMissingIndexEntry, th, ns, id, "not in the namespace index")
	}
	if c.d.num(f[5]) == 0 {
		c.add(KindMissingIndexEntry, th, ns, id, "not in the thread index")
	}
	if c.d.num(f[6]) == 0 {
		c.add(KindMissingIndexEntry, th, ns, "", nsNotInSet)
	}
	if c.d.num(f[3]) == 0 {
		return keys.Encode(th)
	}
	return ""
}

// checkReads is how many times at most a thread is read for one check: a
// violation is reported only when every read of the thread finds it.
const checkReads = 3

// threads checks threads (encoded) of shard n, marks them in seen and
// collects the run index keys their checkpoints name.
//
// A thread is read in several pages, not as one snapshot, and a concurrent
// Prune, DeleteForRuns or CopyThread onto it can delete what one page named
// before the next reads it: that read then finds a checkpoint missing from
// its indexes, or values missing from a checkpoint, that nothing lost. So a
// thread whose read finds violations is read again, up to checkReads times
// in all, and only the violations that every read found are reported (the
// counts and notes are those of the first read). Lost data stays lost, and
// is found by every read; what a deletion left half-read is gone from the
// next one.
func (c *checker) threads(ctx context.Context, n int, threads []string, seen, runs map[string]bool) error {
	for _, enct := range threads {
		seen[enct] = true
		first, err := c.readOnce(ctx, n, enct, runs)
		if err != nil {
			return err
		}
		found := first.res.Violations
		for read := 1; read < checkReads && len(found) > 0; read++ {
			again, err := c.readOnce(ctx, n, enct, map[string]bool{})
			if err != nil {
				return err
			}
			found = slices.DeleteFunc(found, func(v Violation) bool { return !again.reported[v] })
		}
		c.res.Checkpoints += first.res.Checkpoints
		c.res.Writes += first.res.Writes
		c.res.Values += first.res.Values
		c.res.Threads += first.res.Threads
		for _, v := range first.res.Notes {
			c.add(v.Kind, v.Thread, v.Namespace, v.CheckpointID, v.Detail)
		}
		for _, v := range found {
			c.add(v.Kind, v.Thread, v.Namespace, v.CheckpointID, v.Detail)
		}
	}
	return nil
}

// readOnce reads and checks one thread into a checker of its own, and adds
// the run index keys its checkpoints name to runs.
func (c *checker) readOnce(ctx context.Context, n int, enct string, runs map[string]bool) (*checker, error) {
	one := &checker{s: c.s, ctx: c.ctx, res: &CheckResult{}, expiring: c.expiring, reported: map[Violation]bool{}}
	reply, lost, err := one.readThread(ctx, n, enct)
	switch {
	case err != nil:
		return nil, err
	case lost != "":
		th, _ := keys.Decode(enct)
		one.add(KindLostKey, th, "", "", "DATALOSS "+lost)
	case reply != nil:
		one.thread(enct, reply, runs)
	}
	if one.d.err != nil {
		return nil, one.d.err
	}
	return one, nil
}

// page runs check_shard.lua on one page of a shard-wide index of shard n.
func (c *checker) page(ctx context.Context, n int, key, kind, cursor, only string) (items []any, next string, err error) {
	res, err := c.s.run(ctx, scriptrun.CheckShard, []string{key, c.s.layout.Threads(n)},
		c.s.layout.ShardBase(n), kind, cursor, checkPage, only).Slice()
	if err != nil {
		return nil, "", redisErr("check", err)
	}
	if len(res) == 0 {
		return nil, "", corrupt("empty check reply")
	}
	return res[1:], c.d.str(res[0]), nil
}
