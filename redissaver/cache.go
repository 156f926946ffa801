package redissaver

import (
	"strings"
	"sync"
)

// hintCache remembers, for the threads this saver used last, what it last
// learnt of them: a hint that the scripts check, never an answer. Put stages
// values into the generation it remembers (put.lua answers the live one
// when it is stale), and GetTuple predicts the checkpoint it will read
// (confirmed by plain reads or by get_tuple.lua, which reads the answer
// itself when the prediction is wrong).
type hintCache[V any] struct {
	mu  sync.Mutex
	max int
	m   map[string]V
}

// maxHints bounds each cache: past it, an arbitrary entry goes.
const maxHints = 4096

// newHintCache returns a cache of at most max hints; with max negative, one
// that remembers nothing.
func newHintCache[V any](max int) *hintCache[V] {
	return &hintCache[V]{max: max, m: make(map[string]V)}
}

// get returns the hint remembered for key, and whether there is one.
func (c *hintCache[V]) get(key string) (V, bool) {
	if c.max < 0 {
		var zero V
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

// set remembers v for key.
func (c *hintCache[V]) set(key string, v V) { c.setUnless(key, v, nil) }

// setUnless remembers v for key unless keep (nil: never) reports that the
// hint already remembered for it is to stay; in one step, so that
// concurrent callers agree.
func (c *hintCache[V]) setUnless(key string, v V, keep func(old V) bool) {
	if c.max < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.m[key]
	if ok && keep != nil && keep(old) {
		return
	}
	if !ok && len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = v
}

// forgetUnless drops the hint of key unless keep reports that it is to
// stay; in one step, as setUnless.
func (c *hintCache[V]) forgetUnless(key string, keep func(old V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok && !keep(old) {
		delete(c.m, key)
	}
}

// forget drops the hint of key.
func (c *hintCache[V]) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// forgetPrefix drops the hints of every key that starts with prefix: a walk
// of the whole cache (at most maxHints keys, or the cache's own max).
func (c *hintCache[V]) forgetPrefix(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if strings.HasPrefix(k, prefix) {
			delete(c.m, k)
		}
	}
}
