package observe

import (
	"maps"
	"sync"
	"sync/atomic"
)

// A PolicyMap holds what an observer keeps per policy (a metrics module's
// series, say), built on each name's first Get. Reads take no lock and
// allocate nothing; a new name, rare since names come from configuration,
// publishes a copy of the map under a lock. Build one with NewPolicyMap (the
// zero PolicyMap is not usable); it is safe for concurrent use.
type PolicyMap[V any] struct {
	build func(policy string) V
	mu    sync.Mutex
	m     atomic.Pointer[map[string]V]
}

// NewPolicyMap returns an empty PolicyMap whose values build makes. build
// is called under the map's lock, at most once per name.
func NewPolicyMap[V any](build func(policy string) V) *PolicyMap[V] {
	c := &PolicyMap[V]{build: build}
	c.m.Store(&map[string]V{})
	return c
}

// Get returns policy's value, building it on the policy's first Get.
func (c *PolicyMap[V]) Get(policy string) V {
	if v, ok := (*c.m.Load())[policy]; ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := (*c.m.Load())[policy]; ok {
		return v
	}
	next := maps.Clone(*c.m.Load())
	v := c.build(policy)
	next[policy] = v
	c.m.Store(&next)
	return v
}
