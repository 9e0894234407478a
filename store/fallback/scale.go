package fallback

import (
	"sync"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/bounds"
	"github.com/ratekit/ratekit/store"
)

// maxCached bounds the scaler's cache: callers that build limit lists per
// call (they should not) cost a rebuild, not memory without end.
const maxCached = 1024

// scaler turns a call's limits into one instance's share of them, and keeps
// the answer per list of limits, so that no call rebuilds them.
type scaler struct {
	n     int64 // Instances
	mu    sync.RWMutex
	cache map[string][]ratekit.Limit // by the limits' IDs, each followed by 0
}

func newScaler(instances int) scaler {
	return scaler{n: int64(instances), cache: make(map[string][]ratekit.Limit)}
}

// limits returns the scaled limits; with one instance, limits itself. The
// result is shared: callers must not change it.
func (c *scaler) limits(limits []ratekit.Limit) []ratekit.Limit {
	if c.n == 1 {
		return limits
	}
	var buf [256]byte
	key := buf[:0]
	for _, l := range limits {
		key = append(append(key, l.Spec().ID...), 0)
	}
	c.mu.RLock()
	scaled, ok := c.cache[string(key)] // no allocation for the lookup
	c.mu.RUnlock()
	if ok {
		return scaled
	}
	scaled = make([]ratekit.Limit, len(limits))
	for i, l := range limits {
		scaled[i] = scale(l, c.n)
	}
	c.mu.Lock()
	if len(c.cache) >= maxCached {
		clear(c.cache)
	}
	c.cache[string(key)] = scaled
	c.mu.Unlock()
	return scaled
}

// scale returns one of n instances' share of l, built with the public
// constructors from l's Spec: quota, burst or capacity divided by n (rounded
// down, at least 1), rate divided by n; window, precision, queue, block and
// name kept. Custom algorithms, and a bucket whose share would need a
// horizon past the longest a limit may have, are returned unchanged.
func scale(l ratekit.Limit, n int64) ratekit.Limit {
	sp := l.Spec()
	q, rate := max(sp.Quota/n, 1), sp.Rate/float64(n)
	var s ratekit.Limit
	switch sp.Algorithm {
	case store.FixedWindow:
		s = ratekit.FixedWindow(q, sp.Window)
	case store.SlidingWindow:
		s = ratekit.SlidingWindow(q, sp.Window).Precision(sp.Precision)
	case store.SlidingLog:
		s = ratekit.SlidingLog(q, sp.Window)
	case store.TokenBucket:
		s = ratekit.TokenBucket(rate, sp.Window, q)
	case store.LeakyBucket:
		s = ratekit.LeakyBucket(q, rate, sp.Window)
		if sp.MaxWait > 0 {
			s = s.Queue(sp.MaxWait)
		}
	case store.GCRA:
		s = ratekit.GCRA(rate, sp.Window, q)
	case store.Suppressed:
		s = ratekit.Suppressed(q, sp.Window, sp.Factor)
	case store.InFlight:
		s = ratekit.InFlight(q).Lease(sp.Window)
	default:
		return l
	}
	if sp.Block > 0 {
		s = s.Block(sp.Block)
	}
	s = s.Named(sp.Name)
	if ss := s.Spec(); store.Bucket(ss.Algorithm) && float64(ss.Interval)*float64(ss.Quota) > float64(bounds.MaxWindow) {
		return l
	}
	return s
}
