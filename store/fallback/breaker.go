package fallback

import (
	"context"

	"github.com/ratekit/ratekit"
)

// succeeded records a call the primary answered. Only a probe closes an open
// breaker: a call that was sent before it opened proves little.
func (s *Store) succeeded() {
	if s.failures.Load() != 0 { // no shared write on the hot path
		s.failures.Store(0)
	}
}

// failed records a failed call, and opens the breaker at Config.Failures.
// The first probe comes Config.Retry later.
func (s *Store) failed(err error) {
	if s.failures.Add(1) < int64(s.cfg.Failures) || s.open.Load() {
		return
	}
	s.nextProbe.Store(s.now().Add(s.cfg.Retry).UnixNano())
	if s.open.CompareAndSwap(false, true) && s.cfg.OnChange != nil {
		s.cfg.OnChange(true, err)
	}
}

// maybeProbe starts a background probe of the primary with a call's key and
// limits when one is due: at most one per Config.Retry, never two at once. A
// probe the primary answers closes the breaker.
func (s *Store) maybeProbe(key string, primary ratekit.Prepared) {
	now := s.now().UnixNano()
	next := s.nextProbe.Load()
	if now < next || !s.nextProbe.CompareAndSwap(next, now+int64(s.cfg.Retry)) || !s.probing.CompareAndSwap(false, true) {
		return
	}
	s.probes.Add(1)
	go func() {
		defer s.probes.Done()
		defer s.probing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ProbeTimeout)
		defer cancel()
		if _, err := primary.Peek(ctx, key); err != nil {
			return
		}
		s.failures.Store(0)
		if s.open.CompareAndSwap(true, false) && s.cfg.OnChange != nil {
			s.cfg.OnChange(false, nil)
		}
	}()
}
