package fallback

import (
	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/bounds"
	"github.com/ratekit/ratekit/store"
)

// scaled returns limits at one instance's share of n, or limits when n
// is 1.
func scaled(limits []ratekit.Limit, n int64) []ratekit.Limit {
	if n == 1 {
		return limits
	}
	out := make([]ratekit.Limit, len(limits))
	for i, l := range limits {
		out[i] = scale(l, n)
	}
	return out
}

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
