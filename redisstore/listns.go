package redisstore

import (
	"context"
	"slices"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// ListNamespacesOptions select and page the namespaces of ListNamespaces.
type ListNamespacesOptions struct {
	// Prefix keeps the namespaces that start with these labels; a label
	// "*" (Wildcard) matches any one label.
	Prefix []string
	// Suffix keeps the namespaces that end with these labels, "*" matching
	// any one label.
	Suffix []string
	// MaxDepth, when positive, cuts every namespace to its first MaxDepth
	// labels; the results are then distinct cut namespaces.
	MaxDepth int
	// Limit is the number of namespaces to return at most (default 100).
	Limit int
	// Offset is the number of namespaces to skip.
	Offset int
}

// listSteps is the number of registry members one step of ListNamespaces
// examines at most (store_list.lua).
const listSteps = 200

// ListNamespaces returns one page of the namespaces that hold at least one
// live item and match opts, in order: label by label, each by its bytes, a
// namespace before those it prefixes (Python's order of tuples of str).
// It walks the store's namespace registry from the longest literal head of
// opts.Prefix (the labels before its first "*") in bounded steps, one
// round trip each (see the package doc), and stops as soon as the page is
// full: one round trip for a page found among the first few hundred
// namespaces of the range. Namespaces whose items have all expired are left
// out.
//
// Errors: ErrInvalidNamespace (an empty label in Prefix or Suffix),
// ErrInvalidArgument (a negative Limit, Offset or MaxDepth, or a Limit or
// Offset above MaxListLimit or MaxListOffset), ErrCorrupt, or the Redis
// error, wrapped.
func (s *Store) ListNamespaces(ctx context.Context, opts ListNamespacesOptions) (out [][]string, err error) {
	ctx, call := s.begin(ctx, opListNamespaces)
	defer func() {
		call.set(attrItems.Int(len(out)), attrLimit.Int(opts.Limit), attrOffset.Int(opts.Offset))
		call.end(err)
	}()
	if opts.Prefix != nil {
		call.item(opts.Prefix, "")
	}
	q, err := s.prepareList(opts)
	if err != nil {
		return nil, err
	}
	return s.listNamespaces(ctx, q)
}

// listReq is a validated ListNamespaces request.
type listReq struct {
	lo, hi        string
	offset, limit int
	tail          []any // max depth, then the prefix and suffix patterns
}

// prepareList validates opts.
func (s *Store) prepareList(opts ListNamespacesOptions) (*listReq, error) {
	if err := validateLabels(opts.Prefix); err != nil {
		return nil, err
	}
	if err := validateLabels(opts.Suffix); err != nil {
		return nil, err
	}
	if opts.MaxDepth < 0 {
		return nil, errorf(ErrInvalidArgument, "MaxDepth %d: want 0 or more", opts.MaxDepth)
	}
	if err := checkPage(opts.Limit, opts.Offset, MaxListLimit, MaxListOffset); err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	head := opts.Prefix
	if i := slices.Index(head, Wildcard); i >= 0 {
		head = head[:i]
	}
	lo, hi := lexRange(head)
	tail := []any{opts.MaxDepth, len(opts.Prefix)}
	tail = appendPattern(tail, opts.Prefix)
	tail = append(tail, len(opts.Suffix))
	return &listReq{lo: lo, hi: hi, offset: opts.Offset, limit: limit, tail: appendPattern(tail, opts.Suffix)}, nil
}

// listNamespaces runs the walk of a ListNamespaces request.
func (s *Store) listNamespaces(ctx context.Context, q *listReq) ([][]string, error) {
	var names []string
	want := q.offset + q.limit
	from, last := q.lo, ""
	for {
		args := append([]any{s.base, from, q.hi, listSteps, want - len(names)}, q.tail...)
		res, err := s.run(ctx, scriptrun.StoreList, args).StringSlice()
		if err != nil {
			return nil, redisErr("list namespaces", err)
		}
		if len(res) == 0 {
			return nil, errorf(ErrCorrupt, "list script replied nothing")
		}
		for _, name := range res[1:] {
			if name != last && len(names) < want {
				names = append(names, name)
				last = name
			}
		}
		if res[0] == "" || len(names) >= want {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		from = "(" + res[0]
	}
	return decodeNamespaces(names[min(q.offset, len(names)):])
}

// appendPattern appends encoded labels, "*" standing for the wildcard (an
// encoded label is never "*": Encode escapes it).
func appendPattern(args []any, labels []string) []any {
	for _, l := range labels {
		if l == Wildcard {
			args = append(args, Wildcard)
		} else {
			args = append(args, keys.Encode(l))
		}
	}
	return args
}

func decodeNamespaces(res []string) ([][]string, error) {
	out := make([][]string, 0, len(res))
	for _, enc := range res {
		ns, err := decodeNS(enc)
		if err != nil {
			return nil, err
		}
		out = append(out, ns)
	}
	return out, nil
}
