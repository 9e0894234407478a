// Package policycache maps policy names to values built once per name,
// with lock-free reads: the per-policy series of the metrics modules
// (observe/prometheus, observe/otel), looked up on every decision.
package policycache

import (
	"sync"
	"sync/atomic"
)

// A Cache maps policy names to values made by its build function on each
// name's first Get. Reads are lock-free: the map is never changed once
// published; a new name publishes a copy under a lock. Policy names come
// from configuration, so copies are rare and small.
//
// A Cache is safe for concurrent use. Build it with New.
type Cache[V any] struct {
	build func(policy string) V
	mu    sync.Mutex
	m     atomic.Pointer[map[string]V]
}

// New returns an empty Cache whose values build makes. build is called
// under the Cache's lock, at most once per name.
func New[V any](build func(policy string) V) *Cache[V] {
	return &Cache[V]{build: build}
}

// Get returns policy's value, building it on the policy's first Get. Once
// the value exists, Get takes no lock and allocates nothing.
func (c *Cache[V]) Get(policy string) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[policy]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	next := map[string]V{}
	if old != nil {
		if v, ok := (*old)[policy]; ok {
			return v
		}
		next = make(map[string]V, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	}
	v := c.build(policy)
	next[policy] = v
	c.m.Store(&next)
	return v
}
