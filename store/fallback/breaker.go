package fallback

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit"
)

// breaker is the circuit breaker in front of the primary: closed, every
// call asks the primary; open, none does, and probes find out when the
// primary is back. Its state is atomic, so a call never waits for a lock.
type breaker struct {
	threshold int64         // consecutive failures that open it
	retry     time.Duration // the least time between two probes
	onChange  func(open bool, err error)
	now       func() time.Time

	failures  atomic.Int64 // consecutive failed calls since the last success
	open      atomic.Bool
	probing   atomic.Bool  // a probe is in flight
	nextProbe atomic.Int64 // UnixNano of now() before which no probe starts
}

// succeeded records a call the primary answered. Only a probe closes an open
// breaker: a call that was sent before it opened proves little.
func (b *breaker) succeeded() {
	if b.failures.Load() != 0 { // no shared write on the hot path
		b.failures.Store(0)
	}
}

// failed records a failed call, and opens the breaker at the threshold. The
// first probe comes retry later.
func (b *breaker) failed(err error) {
	if b.failures.Add(1) < b.threshold || b.open.Load() {
		return
	}
	b.nextProbe.Store(b.now().Add(b.retry).UnixNano())
	if b.open.CompareAndSwap(false, true) && b.onChange != nil {
		b.onChange(true, err)
	}
}

// closeAfterProbe closes the breaker after a probe the primary answered.
func (b *breaker) closeAfterProbe() {
	b.failures.Store(0)
	if b.open.CompareAndSwap(true, false) && b.onChange != nil {
		b.onChange(false, nil)
	}
}

// claimProbe reports whether the caller may start a probe now: at most one
// per retry (the caller that moves nextProbe on wins), and never two at once.
func (b *breaker) claimProbe() bool {
	now := b.now().UnixNano()
	next := b.nextProbe.Load()
	if now < next || !b.nextProbe.CompareAndSwap(next, now+int64(b.retry)) {
		return false
	}
	return b.probing.CompareAndSwap(false, true)
}

// maybeProbe starts a background probe of the primary with a call's key and
// limits, prepared, when one is due. It returns at once.
func (s *Store) maybeProbe(key string, primary ratekit.Prepared) {
	if !s.b.claimProbe() {
		return
	}
	s.probes.Add(1)
	go func() {
		defer s.probes.Done()
		defer s.b.probing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ProbeTimeout)
		defer cancel()
		if _, err := primary.Peek(ctx, key); err == nil {
			s.b.closeAfterProbe()
		}
	}()
}
