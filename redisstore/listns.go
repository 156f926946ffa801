package redisstore

import (
	"context"
	"slices"

	"github.com/graphstate/redcheck/keys"
	"github.com/graphstate/redcheck/scripts"
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

// ListNamespaces returns one page of the namespaces that hold at least one
// live item and match opts, in order: label by label, each by its bytes, a
// namespace before those it prefixes (Python's order of tuples of str).
// It is one round trip: one script that walks the store's namespace index
// from the longest literal head of opts.Prefix (the labels before its first
// "*"), and stops as soon as the page is full. Namespaces whose items have
// all expired are left out.
//
// Errors: ErrInvalidNamespace (an empty label in Prefix or Suffix),
// ErrInvalidArgument (a negative Limit, Offset or MaxDepth), ErrCorrupt, or
// the Redis error, wrapped.
func (s *Store) ListNamespaces(ctx context.Context, opts ListNamespacesOptions) ([][]string, error) {
	args, err := s.listArgs(opts)
	if err != nil {
		return nil, err
	}
	res, err := s.run(ctx, scripts.StoreList, args).StringSlice()
	if err != nil {
		return nil, redisErr("list namespaces", err)
	}
	return decodeNamespaces(res)
}

// listArgs validates opts and returns the arguments of the list script; see
// store_list.lua.
func (s *Store) listArgs(opts ListNamespacesOptions) ([]any, error) {
	if err := validateLabels(opts.Prefix); err != nil {
		return nil, err
	}
	if err := validateLabels(opts.Suffix); err != nil {
		return nil, err
	}
	if opts.Limit < 0 || opts.Offset < 0 || opts.MaxDepth < 0 {
		return nil, errorf(ErrInvalidArgument, "Limit %d, Offset %d, MaxDepth %d: want 0 or more", opts.Limit, opts.Offset, opts.MaxDepth)
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
	args := []any{s.base, lo, hi, opts.Offset, limit, opts.MaxDepth, len(opts.Prefix)}
	args = appendPattern(args, opts.Prefix)
	args = append(args, len(opts.Suffix))
	return appendPattern(args, opts.Suffix), nil
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
