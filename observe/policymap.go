package observe

import (
	"sync"
	"sync/atomic"
)

// A PolicyMap holds what an observer keeps per policy (a metrics module's
// series, say), made by its build function on each policy name's first
// Get. Reads take no lock and allocate nothing: the map is never changed
// once published, and a new name publishes a copy under a lock. Policy
// names come from configuration, so copies are rare and small.
//
// Build one with NewPolicyMap; the zero PolicyMap is not usable. A
// PolicyMap is safe for concurrent use.
type PolicyMap[V any] struct {
	build func(policy string) V
	mu    sync.Mutex
	m     atomic.Pointer[map[string]V]
}

// NewPolicyMap returns an empty PolicyMap whose values build makes. build
// is called under the map's lock, at most once per name.
func NewPolicyMap[V any](build func(policy string) V) *PolicyMap[V] {
	return &PolicyMap[V]{build: build}
}

// Get returns policy's value, building it on the policy's first Get.
func (c *PolicyMap[V]) Get(policy string) V {
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
