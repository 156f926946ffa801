package redisstore

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/internal/keys"
)

// Op is one operation of Batch: a GetOp, PutOp, DeleteOp, SearchOp or
// ListNamespacesOp.
type Op interface{ isOp() }

// GetOp reads one item, as Get does; its Result.Item is nil when the item
// is absent.
type GetOp struct {
	Namespace  []string
	Key        string
	RefreshTTL Refresh
}

// PutOp stores one item, as Put does: a nil Value deletes the item, as in
// LangGraph.
type PutOp struct {
	Namespace []string
	Key       string
	Value     map[string]any
	Options   []PutOption
}

// DeleteOp removes one item, as Delete does.
type DeleteOp struct {
	Namespace []string
	Key       string
}

// SearchOp searches, as Search does; its Result.Items holds the page.
type SearchOp struct {
	NamespacePrefix []string
	Options         SearchOptions
}

// ListNamespacesOp lists namespaces, as ListNamespaces does; its
// Result.Namespaces holds the page.
type ListNamespacesOp struct {
	Options ListNamespacesOptions
}

func (GetOp) isOp()            {}
func (PutOp) isOp()            {}
func (DeleteOp) isOp()         {}
func (SearchOp) isOp()         {}
func (ListNamespacesOp) isOp() {}

// Result is the result of one Op of a Batch. Only the field of the Op's
// kind is set; puts and deletes have none.
type Result struct {
	Item       *Item        // GetOp: nil when absent
	Items      []SearchItem // SearchOp
	Namespaces [][]string   // ListNamespacesOp
}

// Batch runs ops and returns one Result per op, in order:
//
//   - one Embedder call for the texts of every put and the query of every
//     search (each distinct text once);
//   - the reads first: the gets in one script per 64 (those that refresh
//     apart from the others), then each search and each namespace listing
//     as Search and ListNamespaces run them (bounded steps);
//   - then the writes (puts and deletes), in order, in one atomic script
//     when there are at most 32 of them (and at most 256 KiB), else in
//     several scripts of that size, one after the other.
//
// Reads therefore see the store as it was before the batch's writes, as
// LangGraph's stores do. When several writes address the same item, the
// last one wins and the others are skipped. Every op is validated before
// anything is sent: a bad op fails the whole batch with its error (see the
// single-op methods for the sentinels) and nothing is written. When a
// write script fails after others succeeded, the error says how many
// writes were applied.
func (s *Store) Batch(ctx context.Context, ops []Op) (_ []Result, err error) {
	ctx, call := s.begin(ctx, opBatch)
	defer func() { call.end(err) }()
	call.set(attrOps.Int(len(ops)))
	results := make([]Result, len(ops))
	var (
		gets    [2][]getReq // [refresh off, on]
		getAt   [2][]int
		reqs    []*searchReq
		reqAt   []int
		lists   []*listReq
		listAt  []int
		writes  []*write
		writeAt = map[string]int{} // item -> index in writes
	)
	addWrite := func(w *write) {
		id := member(w.ns) + "\x00\x00" + keys.Encode(w.key)
		if i, ok := writeAt[id]; ok {
			writes[i] = nil // superseded
		}
		writeAt[id] = len(writes)
		writes = append(writes, w)
	}
	for i, op := range ops {
		var err error
		switch o := op.(type) {
		case GetOp:
			var g getReq
			if g, err = s.prepareGet(o.Namespace, o.Key, o.RefreshTTL); err == nil {
				f := 0
				if g.refresh {
					f = 1
				}
				gets[f], getAt[f] = append(gets[f], g), append(getAt[f], i)
			}
		case PutOp:
			var w *write
			if w, err = s.preparePut(o.Namespace, o.Key, o.Value, o.Options); err == nil {
				addWrite(w)
			}
		case DeleteOp:
			var w *write
			if w, err = prepareDelete(o.Namespace, o.Key); err == nil {
				addWrite(w)
			}
		case SearchOp:
			var r *searchReq
			if r, err = s.prepareSearch(o.NamespacePrefix, o.Options); err == nil {
				reqs, reqAt = append(reqs, r), append(reqAt, i)
			}
		case ListNamespacesOp:
			var q *listReq
			if q, err = s.prepareList(o.Options); err == nil {
				lists, listAt = append(lists, q), append(listAt, i)
			}
		default:
			err = errorf(ErrInvalidArgument, "unknown op type %T", op)
		}
		if err != nil {
			return nil, fmt.Errorf("op %d: %w", i, err)
		}
	}
	live := writes[:0]
	for _, w := range writes {
		if w != nil {
			live = append(live, w)
		}
	}
	writes = live

	if err := s.embedAll(ctx, writes, reqs); err != nil {
		return nil, err
	}

	// Reads, then writes.
	for f := range gets {
		if len(gets[f]) == 0 {
			continue
		}
		items, err := s.getItems(ctx, f == 1, gets[f])
		if err != nil {
			return nil, err
		}
		for j, it := range items {
			results[getAt[f][j]].Item = it
		}
	}
	for j, r := range reqs {
		items, err := s.search(ctx, r)
		if err != nil {
			return nil, err
		}
		results[reqAt[j]].Items = items
	}
	for j, q := range lists {
		nss, err := s.listNamespaces(ctx, q)
		if err != nil {
			return nil, err
		}
		results[listAt[j]].Namespaces = nss
	}
	if len(writes) > 0 {
		if err := s.writeAll(ctx, writes); err != nil {
			return nil, err
		}
	}
	return results, nil
}
