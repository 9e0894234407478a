package ratekitprom

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekit/ratekit/observe"
)

// series are one policy's children of every vector, looked up once: an
// Event then costs no label hashing and no allocation.
type series struct {
	decisions   [observe.Invalid + 1]prometheus.Counter // by Outcome
	nearLimit   prometheus.Counter
	storeErrors prometheus.Counter
	fallback    prometheus.Counter
	latency     prometheus.Observer
}

// policies maps policy names to their series. Reads are lock-free: the map
// is never changed once published; a new policy publishes a copy. Policy
// names come from configuration, so copies are rare and small.
type policies struct {
	mu    sync.Mutex
	m     atomic.Pointer[map[string]*series]
	build func(policy string) *series
}

// get returns policy's series, creating them (every series at zero) on the
// policy's first event.
func (p *policies) get(policy string) *series {
	if m := p.m.Load(); m != nil {
		if s, ok := (*m)[policy]; ok {
			return s
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.m.Load()
	next := map[string]*series{}
	if old != nil {
		if s, ok := (*old)[policy]; ok {
			return s
		}
		next = make(map[string]*series, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	}
	s := p.build(policy)
	next[policy] = s
	p.m.Store(&next)
	return s
}
