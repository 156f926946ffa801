package redisstore

import (
	"context"
	"strconv"

	"github.com/graphstate/redcheck/scripts"
)

// SearchOptions select and page the items of a Search.
type SearchOptions struct {
	// Query, when not empty, ranks the items by the cosine similarity of
	// their best vector to the query's (highest first) and leaves out items
	// stored without vectors. It needs an Embedder. Without a query, items
	// come newest UpdatedAt first.
	Query string

	// Filter keeps the items whose value matches every entry, before
	// Offset and Limit apply. A key is a field path with '.' between
	// object keys ("user.name"); a value is either an operator map
	// ({"$gt": 3}, {"$gte": 1, "$lt": 5}) or a value to equal. Operators:
	// $eq and $ne (deep equality of JSON values; numbers by value), $gt,
	// $gte, $lt and $lte (a number with numbers, a string with strings by
	// their bytes; any other pairing does not match). A null and a missing
	// field are the same to a filter: {"a": nil} matches items without "a",
	// and {"a": {"$ne": 1}} matches them too.
	Filter map[string]any

	// Limit is the number of items to return at most (default 10).
	Limit int

	// Offset is the number of matching items to skip.
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
// similarity, highest first, each with its Score; the server ranks them, so
// only the page crosses the network. Either way Search is one round trip:
// one script that walks the namespaces under the prefix, filters inside
// Redis, extends TTLs when asked, and drops the index entries of expired
// items it meets. See the package doc for its cost.
//
// Errors: ErrNoEmbedder for a query on a store without an Embedder;
// ErrInvalidNamespace, ErrInvalidFilter, ErrInvalidArgument (negative Limit
// or Offset); ErrEmbedding; ErrCorrupt; or the Redis error, wrapped.
func (s *Store) Search(ctx context.Context, namespacePrefix []string, opts SearchOptions) ([]SearchItem, error) {
	req, err := s.prepareSearch(namespacePrefix, opts)
	if err != nil {
		return nil, err
	}
	if err := s.embedAll(ctx, nil, []*searchReq{req}); err != nil {
		return nil, err
	}
	res, err := s.run(ctx, scripts.StoreSearch, s.searchArgs(req)).Slice()
	if err != nil {
		return nil, redisErr("search", err)
	}
	return decodeSearch(res)
}

type searchReq struct {
	prefix  []string
	filter  string
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
	if opts.Limit < 0 || opts.Offset < 0 {
		return nil, errorf(ErrInvalidArgument, "Limit %d, Offset %d: want 0 or more", opts.Limit, opts.Offset)
	}
	limit := opts.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	filter, err := compileFilter(opts.Filter)
	if err != nil {
		return nil, err
	}
	refresh, err := opts.RefreshTTL.resolve(s.opts.RefreshOnRead)
	if err != nil {
		return nil, err
	}
	if opts.Query != "" && s.opts.Embedder == nil {
		return nil, ErrNoEmbedder
	}
	return &searchReq{prefix: prefix, filter: filter, limit: limit, offset: opts.Offset, refresh: refresh, query: opts.Query}, nil
}

// searchArgs are the arguments of the search script; see store_search.lua.
func (s *Store) searchArgs(r *searchReq) []any {
	lo, hi := lexRange(r.prefix)
	refresh := "0"
	if r.refresh {
		refresh = "1"
	}
	args := []any{s.base, lo, hi, r.offset, r.limit, r.filter, refresh}
	if r.vector == nil {
		return append(args, 0, "0")
	}
	return append(args, queryArgs(r.vector)...)
}

// decodeSearch reads the reply of the search script.
func decodeSearch(res []any) ([]SearchItem, error) {
	out := make([]SearchItem, 0, len(res))
	for _, r := range res {
		raw, ok := r.([]any)
		if !ok || len(raw) != 5 {
			return nil, errorf(ErrCorrupt, "search script returned %v", r)
		}
		id, ok := raw[0].(string)
		if !ok {
			return nil, errorf(ErrCorrupt, "search script returned id %v", raw[0])
		}
		ns, key, err := splitID(id)
		if err != nil {
			return nil, err
		}
		it, err := decodeItem(ns, key, raw[1:4])
		if err != nil {
			return nil, err
		}
		si := SearchItem{Item: it}
		if sc, ok := raw[4].(string); ok {
			f, err := strconv.ParseFloat(sc, 64)
			if err != nil {
				return nil, errorf(ErrCorrupt, "score %q", sc)
			}
			si.Score = &f
		}
		out = append(out, si)
	}
	return out, nil
}
