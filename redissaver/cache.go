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
func (c *hintCache[V]) set(key string, v V) {
	if c.max < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = v
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
