package redisstore

import (
	"container/heap"
	"slices"
)

// candidate is an item in the running for a page of Search.
type candidate struct {
	id      string // encoded namespace ":" encoded key: unique
	updated int64  // µs
	score   float64
}

// before is the result order of Search, a strict total order: higher score
// first (all scores are 0 without a query), then newer, then by id.
func (a candidate) before(b candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.updated != b.updated {
		return a.updated > b.updated
	}
	return a.id < b.id
}

// topK keeps the k first candidates, by before, of those pushed: O(log k)
// per push, whatever the number of ties.
type topK struct {
	k int
	h candHeap
}

func (t *topK) push(c candidate) {
	if t.k <= 0 {
		return
	}
	if len(t.h) < t.k {
		heap.Push(&t.h, c)
		return
	}
	if c.before(t.h[0]) {
		t.h[0] = c
		heap.Fix(&t.h, 0)
	}
}

// sorted returns the candidates kept, first first.
func (t *topK) sorted() []candidate {
	out := slices.Clone(t.h)
	slices.SortFunc(out, func(a, b candidate) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	return out
}

// candHeap is a heap whose root is the last candidate by before.
type candHeap []candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[j].before(h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
