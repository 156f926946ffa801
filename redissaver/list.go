package redissaver

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	mb "github.com/graphstate/redcheck/internal/member"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// List yields the checkpoints q selects, newest ID first (for equal IDs, by
// thread and namespace as keys.Encode writes them, descending: their own
// byte order when they hold only bytes Encode keeps, or hold an escaped
// byte at the same place). The metadata filter is evaluated inside
// Redis, before the limit, so a page is never short because of filtering.
//
// Round trips: with a thread, one script call per page of Options.PageSize
// checkpoints (or of q.Limit, when smaller); Redis never ships more than the
// page. A page whose values hold more than 32 KiB takes a second round trip:
// the script returns the checkpoints without their values, and the saver
// reads those by plain HMGET, each value once, so that they never enter Lua
// (docs/storage-format.md, "Values out of Lua"); a value gone in between sends the
// page back to the script, which reads it whole (a third). Without a thread
// (every thread of the saver) and with one shard, the same; with several
// shards, two pipelined round trips per page: the first finds the page's
// checkpoints in every shard, the second reads them.
//
// With RefreshOnRead, the lease of every thread a page returns is renewed.
// A thread deleted or replaced while it is being listed ends its listing;
// across threads, checkpoints of deleted or expired threads that are not yet
// reclaimed are skipped, and so are those of a thread's generation other
// than the one its first checkpoint listed was of (a thread deleted and
// written again, or copied onto, during the listing): no checkpoint is
// listed twice.
//
// Errors, yielded with a nil tuple, end the iteration:
// checkpoint.ErrDataLoss when an indexed checkpoint, a value it points to,
// an index or a thread's head is missing; checkpoint.ErrInvalidConfig for an over-long thread or namespace or a
// filter value that is not JSON; ErrCorrupt for undecodable stored data; the
// Redis error, wrapped.
func (s *Saver) List(ctx context.Context, q checkpoint.ListQuery) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		ctx, call := s.begin(ctx, opList)
		if q.ThreadID != "" {
			ns := ""
			if q.CheckpointNS != nil {
				ns = *q.CheckpointNS
			}
			call.address(q.ThreadID, ns, q.CheckpointID)
		}
		// The span covers the listing; the time the caller spends between
		// two tuples is not the saver's (opCall.paused).
		var failed error
		tuples := 0
		y := func(t *checkpoint.Tuple, err error) bool {
			if err != nil {
				failed = err
			} else {
				tuples++
			}
			at := time.Now()
			more := yield(t, err)
			call.paused += time.Since(at)
			return more
		}
		defer func() {
			call.set(attrTuples.Int(tuples))
			call.end(failed)
		}()
		l, err := s.newLister(q)
		if err != nil {
			y(nil, err)
			return
		}
		if q.ThreadID == "" && s.layout.Shards() > 1 {
			s.listMerged(ctx, l, y)
			return
		}
		s.listOne(ctx, l, y)
	}
}

// lister holds what the pages of one List call share.
type lister struct {
	q       checkpoint.ListQuery
	filter  []any // field, canonical JSON value pairs
	nsOnly  string
	left    int   // results still wanted; -1 for no limit
	refresh int64 // the lease to renew on the threads read, in ms; 0 for none
	// gens: in a listing of every thread, the generation of each thread
	// that its first checkpoint listed was of.
	gens map[string]string
}

// firstGen reports whether gen is the generation of thread that the listing
// of every thread met first (recording it when thread is new to it). A
// thread deleted and written again (or copied onto) while the listing runs
// has a new generation, which may hold the IDs already listed: its
// checkpoints are skipped, as a listing of that thread alone ends at a
// change of generation, and so no checkpoint is listed twice.
func (l *lister) firstGen(thread, gen string) bool {
	if l.gens == nil {
		l.gens = map[string]string{}
	}
	g, ok := l.gens[thread]
	if !ok {
		l.gens[thread] = gen
		return true
	}
	return g == gen
}

func (s *Saver) newLister(q checkpoint.ListQuery) (*lister, error) {
	if q.ThreadID != "" {
		if err := keys.ValidateThreadID(q.ThreadID); err != nil {
			return nil, invalidConfig("%v", err)
		}
	}
	l := &lister{q: q, left: -1, refresh: s.refreshMillis()}
	if q.CheckpointNS != nil {
		if err := keys.ValidateNamespace(*q.CheckpointNS); err != nil {
			return nil, invalidConfig("%v", err)
		}
		l.nsOnly = "=" + keys.Encode(*q.CheckpointNS)
	}
	if q.Limit > 0 {
		l.left = q.Limit
	}
	names := make([]string, 0, len(q.Filter))
	for k := range q.Filter {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		enc, err := checkpoint.EncodeMetadataValue(q.Filter[k])
		if err != nil {
			return nil, invalidConfig("filter %q: %v", k, err)
		}
		l.filter = append(l.filter, prefixMetadata+k, string(enc))
	}
	return l, nil
}

// page returns the size of the next page.
func (l *lister) page(size int) int {
	if l.left >= 0 && l.left < size {
		return l.left
	}
	return size
}

// walk is a position in one lex-ordered index.
type walk struct {
	key, mode      string // KEYS[1] of list.lua, and the mode
	sb, enct, encn string // shard base, encoded thread and namespace
	gen            string // the thread's generation the first page read
	max, min       string // ZREVRANGEBYLEX bounds
	done           bool
}

// newWalk positions a walk on an index: key is the thread head (modes "ns"
// and "thread") or the shard index (mode "shard"). Members of mode "ns" are
// IDs, the others start with the ID and "\x00".
func newWalk(key, mode, sb, enct, encn string, q checkpoint.ListQuery) *walk {
	w := &walk{key: key, mode: mode, sb: sb, enct: enct, encn: encn, max: "+", min: "-"}
	if q.Before != "" {
		w.lower("(" + q.Before)
	}
	if id := q.CheckpointID; id != "" {
		if keys.ValidateID(id) != nil {
			w.done = true // no stored checkpoint can have that ID
		}
		if mode == "ns" {
			w.lower("[" + id)
			w.min = "[" + id
		} else {
			w.lower("(" + id + "\x01")
			w.min = "[" + id + mb.Sep
		}
	}
	return w
}

// lower moves the upper bound down to b when b is tighter.
func (w *walk) lower(b string) {
	if w.max == "+" {
		w.max = b
		return
	}
	if c := strings.Compare(b[1:], w.max[1:]); c < 0 || (c == 0 && b[0] == '(') {
		w.max = b
	}
}

// What a list.lua call returns of each checkpoint of its page (ARGV[10]).
const (
	listWhole   = "0" // the checkpoints with their values
	listMembers = "1" // the index members only
	listAuto    = "2" // the checkpoints, with their values when they are small (values.go)
)

// call builds the list.lua call of the walk's next page, returning what
// (listWhole, listMembers or listAuto).
func (w *walk) call(l *lister, page int, what string) scriptCall {
	nsOnly := ""
	if w.mode == "shard" {
		nsOnly = l.nsOnly
	}
	args := append([]any{w.mode, w.sb, w.enct, w.encn, w.gen, w.max, w.min, page, max(scanBudget, page), what, nsOnly,
		l.refresh, len(l.filter) / 2}, l.filter...)
	return scriptCall{keys: []string{w.key}, args: args}
}

// advance records the cursor and generation a page returned.
func (w *walk) advance(next, gen string) {
	if w.gen == "" {
		w.gen = gen
	}
	if next == "" {
		w.done = true
		return
	}
	w.lower("(" + next)
}

// listOne lists from a single index: a (thread, namespace), a thread, or the
// only shard.
func (s *Saver) listOne(ctx context.Context, l *lister, yield func(*checkpoint.Tuple, error) bool) {
	var w *walk
	switch q := l.q; {
	case q.ThreadID != "":
		sb, enct := s.layout.ShardBase(s.layout.Shard(q.ThreadID)), keys.Encode(q.ThreadID)
		if q.CheckpointNS != nil {
			w = newWalk(s.layout.Head(q.ThreadID), "ns", sb, enct, keys.Encode(*q.CheckpointNS), q)
		} else {
			w = newWalk(s.layout.Head(q.ThreadID), "thread", sb, enct, "", q)
		}
	default:
		w = newWalk(s.layout.All(0), "shard", s.layout.ShardBase(0), "", "", q)
	}
	what := listAuto
	for !w.done && l.left != 0 {
		paged(ctx)
		at := *w
		c := w.call(l, l.page(s.opts.PageSize), what)
		res, err := s.run(ctx, scriptrun.List, c.keys, c.args...).Slice()
		if err != nil {
			yield(nil, scriptErr("list", err))
			return
		}
		next, gen, raw, err := listReply(res)
		if err != nil {
			yield(nil, err)
			return
		}
		w.advance(next, gen)
		items, err := pageItems(l.q, w.mode, gen, raw)
		if err == nil && w.mode == "shard" {
			items = slices.DeleteFunc(items, func(it cpReply) bool { return !l.firstGen(it.thread, it.gen) })
		}
		if err == nil {
			err = s.readValues(ctx, "list", items)
		}
		if errors.Is(err, errValueGone) {
			// A value went between the two round trips (or was lost): the
			// script reads the page again, values and all, and answers for it.
			*w, what = at, listWhole
			continue
		}
		if err != nil {
			yield(nil, err)
			return
		}
		what = listAuto
		for _, it := range items {
			t, err := s.decodeListItem(ctx, it)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(t, nil) {
				return
			}
			if l.left > 0 {
				l.left--
			}
		}
	}
}

// listReply splits a list.lua reply into its cursor, generation and items.
func listReply(res []any) (next, gen string, items []any, err error) {
	if len(res) < 2 {
		return "", "", nil, corrupt("list reply of %d items", len(res))
	}
	next, ok := res[0].(string)
	gen, ok2 := res[1].(string)
	if !ok || !ok2 {
		return "", "", nil, corrupt("list cursor of %T and generation of %T", res[0], res[1])
	}
	return next, gen, res[2:], nil
}

// pageItems splits the {member, flat, values, extra} items of a page that
// read generation gen ("" in shard mode, where members name theirs).
func pageItems(q checkpoint.ListQuery, mode, gen string, raw []any) ([]cpReply, error) {
	items := make([]cpReply, len(raw))
	for i, item := range raw {
		parts, ok := item.([]any)
		if !ok || len(parts) != 4 {
			return nil, corrupt("list item of %T", item)
		}
		var d reply
		member := d.str(parts[0])
		if d.err != nil {
			return nil, d.err
		}
		it := cpReply{gen: gen, flat: parts[1], values: parts[2], extra: parts[3]}
		var err error
		if it.id, it.thread, it.ns, it.gen, err = parseMember(q, mode, gen, member); err != nil {
			return nil, err
		}
		items[i] = it
	}
	return items, nil
}

// decodeListItem decodes one checkpoint of a page.
func (s *Saver) decodeListItem(ctx context.Context, it cpReply) (*checkpoint.Tuple, error) {
	return s.decodeTuple(ctx, it.thread, it.ns, it.id, it.flat, it.values, it.extra)
}

// parseMember recovers the checkpoint a member of an index names, and its
// generation: gen, the page's, in modes ns and thread.
func parseMember(q checkpoint.ListQuery, mode, gen, member string) (id, thread, ns, g string, err error) {
	switch mode {
	case "ns":
		return member, q.ThreadID, *q.CheckpointNS, gen, nil
	case "thread":
		id, encNS, ok := strings.Cut(member, mb.Sep)
		if !ok {
			return "", "", "", "", corrupt("thread index member %q", member)
		}
		ns, err := keys.Decode(encNS)
		if err != nil {
			return "", "", "", "", corrupt("thread index member %q: %v", member, err)
		}
		return id, q.ThreadID, ns, gen, nil
	}
	id, thread, ns, g, err = mb.Parse(member)
	if err != nil {
		return "", "", "", "", corrupt("%v", err)
	}
	return id, thread, ns, g, nil
}
