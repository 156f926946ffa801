package redissaver

import (
	"context"
	"encoding/json"
	"fmt"
	mb "github.com/graphstate/redcheck/internal/member"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/keys"
)

// checker accumulates the findings of one Verify call.
type checker struct {
	d        reply // the script replies, decoded strictly
	s        *Saver
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

// threads checks threads (encoded) of shard n, marks them in seen and
// collects the run index keys their checkpoints name.
func (c *checker) threads(ctx context.Context, n int, threads []string, seen, runs map[string]bool) error {
	for _, enct := range threads {
		seen[enct] = true
		reply, lost, err := c.readThread(ctx, n, enct)
		switch {
		case err != nil:
			return err
		case lost != "":
			th, _ := keys.Decode(enct)
			c.add(KindLostKey, th, "", "", "DATALOSS "+lost)
		case reply != nil:
			c.thread(enct, reply, runs)
		}
	}
	return nil
}

// threadReader reads one thread for the check in bounded pages
// (check_thread.lua).
type threadReader struct {
	c         *checker
	n         int
	enct, gen string
	gone      bool
	lost      string
}

// page reads one page: its next cursor and items.
func (r *threadReader) page(ctx context.Context, part, encns, cursor string, extra ...any) (string, []any, error) {
	l := r.c.s.layout
	args := append([]any{l.ShardBase(r.n), r.enct, r.gen, part, encns, cursor, checkBatch}, extra...)
	res, err := r.c.s.run(ctx, scriptrun.CheckThread, []string{l.ShardBase(r.n) + "t:" + r.enct, l.Threads(r.n), l.All(r.n)}, args...).Slice()
	if err != nil {
		return "", nil, redisErr("check", err)
	}
	if len(res) < 3 {
		return "", nil, corrupt("check thread reply of %d items", len(res))
	}
	switch r.c.d.str(res[0]) {
	case "":
		r.gone = true
	case "lost":
		r.lost = r.c.d.str(res[1])
	default:
		r.gen = r.c.d.str(res[1])
	}
	return r.c.d.str(res[2]), res[3:], nil
}

// all reads every page of a part; scans end at "0", walks at "".
func (r *threadReader) all(ctx context.Context, part, encns, start string) ([]any, error) {
	end := ""
	if start == "0" {
		end = "0"
	}
	var out []any
	for cursor := start; ; {
		next, items, err := r.page(ctx, part, encns, cursor)
		if err != nil || r.gone || r.lost != "" {
			return nil, err
		}
		out = append(out, items...)
		if cursor = next; cursor == end {
			return out, nil
		}
	}
}

// readThread assembles, from bounded pages, what the check verifies of one
// thread: {registered, thread index members, {encoded namespace, in the
// namespace set, namespace index members, values as field, value, ...,
// checkpoints}...}, the checkpoints being those either index names and, one
// level up, the parents those name. A nil reply is a thread gone or expired
// meanwhile; lost names a missing head or registry entry.
//
// The pages are not one snapshot, so they are read in an order that
// concurrent Puts and PutWrites (which only add, each atomically) cannot
// turn into a false finding: namespaces, then each namespace's index, its
// checkpoints and values, then the thread index, and the namespace set and
// indexes again for what the thread index names beyond them. A concurrent
// Prune, DeleteForRuns or CopyThread onto the thread can still cause a
// finding that a second check does not repeat.
func (c *checker) readThread(ctx context.Context, n int, enct string) (reply []any, lost string, err error) {
	r := &threadReader{c: c, n: n, enct: enct}
	stop := func(err error) bool { return err != nil || r.gone || r.lost != "" }
	type nsEntry struct {
		inSet int64
		nsidx []any
		ids   []string
		cps   []any
		blobs []any
	}
	entries := map[string]*nsEntry{}
	var order []string
	seenID := map[string]bool{}
	entry := func(encns string) *nsEntry {
		e := entries[encns]
		if e == nil {
			e = &nsEntry{}
			entries[encns] = e
			order = append(order, encns)
		}
		return e
	}
	addID := func(encns, id string) bool {
		if k := encns + mb.Sep + id; !seenID[k] {
			seenID[k] = true
			e := entry(encns)
			e.ids = append(e.ids, id)
			return true
		}
		return false
	}
	// fill reads a namespace's index and the checkpoints not read yet, with
	// their parents; values once.
	fill := func(encns string) error {
		e := entry(encns)
		nsidx, err := r.all(ctx, "nsidx", encns, "")
		if stop(err) {
			return err
		}
		e.nsidx = nsidx
		var todo []string
		for _, id := range nsidx {
			if addID(encns, c.d.str(id)) {
				todo = append(todo, c.d.str(id))
			}
		}
		cps, err := r.checkpoints(ctx, encns, todo)
		if stop(err) {
			return err
		}
		var parents []string
		for _, cp := range cps {
			if p := c.d.field(c.d.list(c.d.list(cp)[1]), fieldParent); p != "" && addID(encns, p) {
				parents = append(parents, p)
			}
		}
		more, err := r.checkpoints(ctx, encns, parents)
		if stop(err) {
			return err
		}
		e.cps = append(append(e.cps, cps...), more...)
		e.blobs, err = r.all(ctx, "blobs", encns, "0")
		return err
	}
	set, err := r.all(ctx, "ns", "", "0")
	if stop(err) {
		return nil, r.lost, err
	}
	for _, m := range set {
		entry(c.d.str(m)).inSet = 1
	}
	for _, encns := range slices.Clone(order) {
		if err := fill(encns); stop(err) {
			return nil, r.lost, err
		}
	}
	tidx, err := r.all(ctx, "tidx", "", "")
	if stop(err) {
		return nil, r.lost, err
	}
	// What the thread index names beyond what was read: checkpoints put
	// meanwhile, or entries whose checkpoint or namespace index is missing.
	extra := map[string][]string{}
	for _, m := range tidx {
		if id, encns, ok := strings.Cut(c.d.str(m), mb.Sep); ok && !strings.Contains(encns, mb.Sep) && !seenID[encns+mb.Sep+id] {
			extra[encns] = append(extra[encns], id)
		}
	}
	if len(extra) > 0 {
		again, err := r.all(ctx, "ns", "", "0")
		if stop(err) {
			return nil, r.lost, err
		}
		for _, m := range again {
			entry(c.d.str(m)).inSet = 1
		}
		// Only what the thread index names is read now: the namespace
		// index (for membership), those checkpoints, then the values again
		// (a superset of what they point to). Checkpoints put after the
		// thread index was read are left to the next check.
		for _, encns := range slices.Sorted(maps.Keys(extra)) {
			e := entry(encns)
			if e.nsidx, err = r.all(ctx, "nsidx", encns, ""); stop(err) {
				return nil, r.lost, err
			}
			var todo []string
			for _, id := range extra[encns] {
				if addID(encns, id) {
					todo = append(todo, id)
				}
			}
			cps, err := r.checkpoints(ctx, encns, todo)
			if stop(err) {
				return nil, r.lost, err
			}
			e.cps = append(e.cps, cps...)
			if e.blobs, err = r.all(ctx, "blobs", encns, "0"); stop(err) {
				return nil, r.lost, err
			}
		}
	}
	reply = []any{int64(1), tidx}
	for _, encns := range order {
		e := entries[encns]
		reply = append(reply, []any{encns, e.inSet, e.nsidx, e.blobs, e.cps})
	}
	return reply, "", nil
}

// checkpoints reads the checkpoints ids of a namespace, checkBatch per page.
func (r *threadReader) checkpoints(ctx context.Context, encns string, ids []string) ([]any, error) {
	var out []any
	for len(ids) > 0 {
		batch := ids[:min(checkBatch, len(ids))]
		ids = ids[len(batch):]
		extra := make([]any, len(batch))
		for i, id := range batch {
			extra[i] = id
		}
		_, items, err := r.page(ctx, "cps", encns, "", extra...)
		if err != nil || r.gone || r.lost != "" {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// thread checks the reply of check_thread.lua for one thread.
func (c *checker) thread(enct string, reply []any, runs map[string]bool) {
	th, err := keys.Decode(enct)
	if err != nil {
		th = enct
	}
	registered := c.d.num(reply[0]) == 1
	inThreadIndex := map[string]bool{} // id \0 encoded ns
	for _, m := range c.d.list(reply[1]) {
		id, encns, ok := strings.Cut(c.d.str(m), mb.Sep)
		_, nserr := keys.Decode(encns)
		if !ok || keys.ValidateID(id) != nil || nserr != nil {
			c.add(KindBadEntry, th, "", "", fmt.Sprintf("thread index member %q is not id \\0 namespace", c.d.str(m)))
			continue
		}
		inThreadIndex[c.d.str(m)] = true
	}
	live := 0
	for _, entry := range reply[2:] {
		live += c.namespace(th, c.d.list(entry), inThreadIndex, runs)
	}
	switch {
	case live > 0 && !registered:
		c.add(KindMissingIndexEntry, th, "", "", "the thread has checkpoints but is not in its shard's registry")
	case live == 0 && registered:
		c.lost(KindStaleEntry, th, "", "", "the registry names a thread without checkpoints")
	}
	if live > 0 || registered {
		c.res.Threads++
	}
}

// namespace checks one namespace entry of check_thread.lua and returns the
// number of checkpoints it holds.
func (c *checker) namespace(th string, e []any, inThreadIndex, runs map[string]bool) int {
	if len(e) != 5 {
		c.add(KindBadEntry, th, "", "", "namespace entry of the check reply is malformed")
		return 0
	}
	encns, inSet := c.d.str(e[0]), c.d.num(e[1]) == 1
	ns, err := keys.Decode(encns)
	if err != nil {
		c.add(KindBadEntry, th, encns, "", "namespace is not encoded")
		ns = encns
	}
	inIndex := map[string]bool{}
	for _, id := range c.d.list(e[2]) {
		if keys.ValidateID(c.d.str(id)) != nil {
			c.add(KindBadEntry, th, ns, "", fmt.Sprintf("namespace index member %q is no checkpoint id", c.d.str(id)))
		}
		inIndex[c.d.str(id)] = true
	}
	blobs := map[string]string{}
	bf := c.d.list(e[3])
	for i := 0; i+1 < len(bf); i += 2 {
		blobs[c.d.str(bf[i])] = c.d.str(bf[i+1])
	}
	cps := c.d.list(e[4])
	exists := map[string]bool{}
	for _, cp := range cps {
		if f := c.d.list(cp); len(f) == 4 && len(c.d.list(f[1])) > 0 {
			exists[c.d.str(f[0])] = true
		}
	}
	live := 0
	decoded := map[string]bool{} // blob fields already decoded
	for _, cp := range cps {
		f := c.d.list(cp)
		if len(f) != 4 {
			continue
		}
		id, flat, inAll, inRun := c.d.str(f[0]), c.d.list(f[1]), c.d.num(f[2]), c.d.num(f[3])
		if !exists[id] {
			if inIndex[id] {
				c.lost(KindMissingCheckpoint, th, ns, id, "named by the namespace index")
			}
			if inThreadIndex[id+mb.Sep+encns] {
				c.lost(KindMissingCheckpoint, th, ns, id, "named by the thread index")
			}
			continue
		}
		live++
		c.res.Checkpoints++
		for _, miss := range []struct {
			absent bool
			what   string
		}{
			{!inIndex[id], "the namespace index"},
			{!inThreadIndex[id+mb.Sep+encns], "the thread index"},
			{inAll != 1, "the shard index"},
		} {
			if miss.absent {
				c.add(KindMissingIndexEntry, th, ns, id, "not in "+miss.what)
			}
		}
		run := c.d.field(flat, fieldRunKey)
		switch inRun {
		case 0:
			c.lost(KindMissingIndexEntry, th, ns, id, fmt.Sprintf("not in its run index %q", run))
		case -2:
			c.add(KindBadCheckpoint, th, ns, id, fmt.Sprintf("run index key %q lies outside the thread's shard", run))
		}
		if inRun >= 0 && run != "" {
			runs[run] = true
		}
		c.checkpoint(th, ns, id, flat, blobs, exists, decoded)
	}
	if live > 0 && !inSet {
		c.add(KindMissingIndexEntry, th, ns, "", nsNotInSet)
	}
	if live == 0 && inSet {
		c.lost(KindStaleEntry, th, ns, "", "the thread's namespace set names a namespace without checkpoints")
	}
	return live
}

// checkpoint checks the fields of one checkpoint hash.
func (c *checker) checkpoint(th, ns, id string, flat []any, blobs map[string]string, exists, decoded map[string]bool) {
	bad := func(kind, format string, args ...any) { c.add(kind, th, ns, id, fmt.Sprintf(format, args...)) }
	hasV := false
	for i := 0; i+1 < len(flat); i += 2 {
		f, v := c.d.str(flat[i]), c.d.str(flat[i+1])
		switch {
		case f == fieldV:
			hasV = true
			if _, err := strconv.Atoi(v); err != nil {
				bad(KindBadCheckpoint, "format version %q", v)
			}
		case f == fieldVersionsSeen:
			var seen map[string]map[string]string
			if err := json.Unmarshal([]byte(v), &seen); err != nil {
				bad(KindBadCheckpoint, "versions seen: %v", err)
			}
		case f == fieldUpdated:
			var u []string
			if err := json.Unmarshal([]byte(v), &u); err != nil {
				bad(KindBadCheckpoint, "updated channels: %v", err)
			}
		case f == fieldParent:
			if keys.ValidateID(v) != nil {
				bad(KindBadCheckpoint, "parent %q is no checkpoint id", v)
			} else if !exists[v] {
				c.add(KindDanglingParent, th, ns, id, fmt.Sprintf("parent %s does not exist", v))
			}
		case strings.HasPrefix(f, prefixChannel):
			ch := f[len(prefixChannel):]
			field := mb.Blob(ch, v)
			c.res.Values++
			stored, ok := blobs[field]
			switch {
			case !ok:
				bad(KindMissingBlob, "channel %q version %q has no value (blob field %q)", ch, storedVersion(v), field)
			case stored != "" && !decoded[field]:
				decoded[field] = true
				if _, err := c.s.decodeValue(stored); err != nil {
					bad(KindBadValue, "channel %q version %q: %v", ch, storedVersion(v), err)
				}
			}
		case strings.HasPrefix(f, prefixMetadata):
			if _, err := checkpoint.DecodeMetadataValue([]byte(v)); err != nil {
				bad(KindBadCheckpoint, "metadata %q: %v", f[len(prefixMetadata):], err)
			}
		case strings.HasPrefix(f, prefixWrite):
			c.res.Writes++
			if _, err := c.s.decodeWrite(f, v); err != nil {
				bad(KindBadWrite, "%v", err)
			}
		}
	}
	if !hasV {
		bad(KindBadCheckpoint, "no format version (field %q): a hash of writes without a checkpoint", fieldV)
	}
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
