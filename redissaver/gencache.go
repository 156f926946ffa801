package redissaver

import "sync"

// genCache remembers the live generation of the threads this saver wrote
// last, so that a Put can write its values with plain commands to the
// generation's values hash (put.lua's staged values). An entry is a hint:
// put.lua checks it against the thread's head, takes the values back and
// answers the live generation when it is stale.
type genCache struct {
	mu  sync.Mutex
	max int
	m   map[string]string
}

// maxCachedGens bounds the cache: past it, an arbitrary entry goes.
const maxCachedGens = 4096

func newGenCache(max int) *genCache { return &genCache{max: max, m: make(map[string]string)} }

// get returns the generation remembered for thread, or "".
func (c *genCache) get(thread string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[thread]
}

// set remembers gen for thread; gen "" forgets it.
func (c *genCache) set(thread, gen string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == "" {
		delete(c.m, thread)
		return
	}
	if _, ok := c.m[thread]; !ok && len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[thread] = gen
}
