package redisstore

import (
	"context"
)

// SearchOptions select and page the items of a Search.
type SearchOptions struct {
	// Query, when not empty, ranks the items by the cosine similarity of
	// their best vector to the query's (highest first) and leaves out items
	// stored without vectors. A store without an Embedder ignores it, as
	// LangGraph does: the search is then the plain one, without scores.
	// Without a query, items come newest UpdatedAt first.
	Query string

	// Filter keeps the items whose value matches every entry, before
	// Offset and Limit apply. A key is a top-level field of the value, or,
	// when the value has no field of that exact name, a field path with
	// '.' between object keys ("user.name"); a value is either an operator
	// map ({"$gt": 3}, {"$gte": 1, "$lt": 5}) or a value to equal.
	// Operators: $eq and $ne (deep equality of JSON values; numbers by
	// value; an array never equals an object), $gt, $gte, $lt and $lte (a
	// number with numbers, a string with strings by their bytes; any other
	// pairing does not match). A null and a missing field are the same to a
	// filter: {"a": nil} matches items without "a", and {"a": {"$ne": 1}}
	// matches them too. Infinite and NaN operands mean what they mean for
	// float64: {"$lt": +Inf} and {"$gt": -Inf} match every number, $eq NaN
	// matches nothing and $ne NaN everything. The filter runs in the
	// client, on the values the search reads.
	Filter map[string]any

	// Limit is the number of items to return at most: default 10, at
	// most MaxSearchLimit.
	Limit int

	// Offset is the number of matching items to skip, at most
	// MaxSearchOffset.
	Offset int

	// RefreshTTL says whether to extend the TTL of the items returned
	// (default Options.RefreshOnRead).
	RefreshTTL Refresh
}

// Search returns the items under namespacePrefix that match opts.Filter,
// one page of them (opts.Offset, opts.Limit). The prefix matches whole
// labels: ("a") matches ("a") and ("a", "b"), never ("ab"); an empty prefix
// matches every item of the store.
//
// Without opts.Query, items come newest UpdatedAt first. With it, the query
// is embedded (one Embedder call) and items come by exact cosine
// similarity, highest first, each with its Score; on a store without an
// Embedder the query is ignored, as LangGraph does. Ties come newest first,
// then in a fixed order.
//
// Search walks the items under the prefix in bounded steps (one round trip
// each, see the package doc for the bounds), ranks and filters them in the
// client, keeping only the best Offset+Limit, then reads the page's items
// (one more round trip per 64 items), extending their TTLs when asked.
// Without a filter or a query, it reads at most Offset+Limit index entries
// per namespace. The walk is not a snapshot: an item written while it runs
// may or may not be seen; when an item of the page changed or left before
// the page is read, the search runs again (twice at most).
//
// Errors: ErrInvalidNamespace, ErrInvalidFilter, ErrInvalidArgument
// (negative Limit or Offset, or above MaxSearchLimit or MaxSearchOffset);
// ErrEmbedding; ErrCorrupt; or the Redis error, wrapped.
func (s *Store) Search(ctx context.Context, namespacePrefix []string, opts SearchOptions) (out []SearchItem, err error) {
	ctx, call := s.begin(ctx, opSearch)
	defer func() {
		// Whether a query and a filter were given, never what they hold.
		call.set(attrItems.Int(len(out)), attrQuery.Bool(opts.Query != ""), attrFiltered.Bool(len(opts.Filter) > 0),
			attrLimit.Int(opts.Limit), attrOffset.Int(opts.Offset))
		call.end(err)
	}()
	call.item(namespacePrefix, "")
	req, err := s.prepareSearch(namespacePrefix, opts)
	if err != nil {
		return nil, err
	}
	if err := s.embedAll(ctx, nil, []*searchReq{req}); err != nil {
		return nil, err
	}
	return s.search(ctx, req)
}

type searchReq struct {
	prefix  []string
	filter  filter
	limit   int
	offset  int
	refresh bool
	query   string
	vector  []float32
}

func (s *Store) prepareSearch(prefix []string, opts SearchOptions) (*searchReq, error) {
	if err := validateLabels(prefix); err != nil {
		return nil, err
	}
	if err := checkPage(opts.Limit, opts.Offset, MaxSearchLimit, MaxSearchOffset); err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	f, err := compileFilter(opts.Filter)
	if err != nil {
		return nil, err
	}
	refresh, err := opts.RefreshTTL.resolve(s.opts.RefreshOnRead.on())
	if err != nil {
		return nil, err
	}
	q := opts.Query
	if s.opts.Embedder == nil {
		q = "" // LangGraph ignores the query of a store without an index
	}
	return &searchReq{prefix: prefix, filter: f, limit: limit, offset: opts.Offset, refresh: refresh, query: q}, nil
}

// checkPage checks a Limit and an Offset against their caps.
func checkPage(limit, offset, maxLimit, maxOffset int) error {
	if limit < 0 || offset < 0 {
		return errorf(ErrInvalidArgument, "Limit %d, Offset %d: want 0 or more", limit, offset)
	}
	if limit > maxLimit || offset > maxOffset {
		return errorf(ErrInvalidArgument, "Limit %d, Offset %d: the caps are %d and %d", limit, offset, maxLimit, maxOffset)
	}
	return nil
}

// searchAttempts bounds the runs of one Search when its page keeps
// changing under it.
const searchAttempts = 3

func (s *Store) search(ctx context.Context, r *searchReq) ([]SearchItem, error) {
	for attempt := 1; ; attempt++ {
		page, err := s.rank(ctx, r)
		if err != nil {
			return nil, err
		}
		items, changed, err := s.fetchPage(ctx, page, r)
		if err != nil || !changed || attempt == searchAttempts {
			return items, err
		}
	}
}

// rank walks the items under the prefix and returns the page's candidates,
// in order.
func (s *Store) rank(ctx context.Context, r *searchReq) ([]candidate, error) {
	lo, hi := lexRange(r.prefix)
	top := topK{k: r.offset + r.limit}
	mode, perNS := "u", 0
	var q query
	if r.vector != nil {
		mode, q = "uw", newQuery(r.vector)
	}
	if r.filter != nil {
		mode += "v"
	} else if r.vector == nil {
		perNS = top.k // the newest k of each namespace hold the newest k of all
	}
	err := s.scan(ctx, lo, hi, perNS, mode, func(e scanEntry) error {
		if r.filter != nil {
			value, err := s.scannedValue(ctx, e)
			if err != nil {
				return err
			}
			if !r.filter.match(value) {
				return nil
			}
		}
		c := candidate{id: e.id, updated: e.updated}
		if r.vector != nil {
			sc, ok := q.score(e.nvec, e.vectors)
			if !ok {
				return nil // stored without vectors
			}
			c.score = sc
		}
		top.push(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	all := top.sorted()
	return all[min(r.offset, len(all)):], nil
}

// fetchPage reads the page's items, extending their TTLs when asked, and
// reports whether one of them left or changed since the walk met it.
func (s *Store) fetchPage(ctx context.Context, page []candidate, r *searchReq) ([]SearchItem, bool, error) {
	gs := make([]getReq, len(page))
	for i, c := range page {
		ns, key, err := splitID(c.id)
		if err != nil {
			return nil, false, err
		}
		gs[i] = getReq{ns: ns, key: key, refresh: r.refresh}
	}
	items, err := s.getItems(ctx, r.refresh, gs)
	if err != nil {
		return nil, false, err
	}
	out := make([]SearchItem, 0, len(page))
	changed := false
	for i, it := range items {
		if it == nil || it.UpdatedAt.UnixMicro() != page[i].updated {
			changed = true
			if it == nil {
				continue
			}
		}
		si := SearchItem{Item: *it}
		if r.vector != nil {
			sc := page[i].score
			si.Score = &sc
		}
		out = append(out, si)
	}
	return out, changed, nil
}
