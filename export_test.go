package ratekit

import (
	"time"

	"github.com/ratekit/ratekit/internal/elapsed"
)

// PolicyQuota is the quota and window (whole seconds) that describe l in
// headers.
func PolicyQuota(l Limit) (quota, windowSeconds int64) { return l.def().headerQ, l.def().headerW }

// Validate is the check New applies to each limit.
func (l Limit) Validate() error { return l.validate() }

// Fingerprint is the hash of the parameters at the end of the storage ID.
func (l Limit) Fingerprint() string { return l.def().fingerprint() }

// GateEntries is how many subjects the Limiter's count of in-flight
// requests holds (see Reserve): 0 when none is in flight.
func (l *Limiter) GateEntries() int {
	if l.set.Load().gate == nil {
		return 0
	}
	n := 0
	for i := range l.set.Load().gate.shards {
		sh := &l.set.Load().gate.shards[i]
		sh.mu.Lock()
		n += len(sh.held)
		sh.mu.Unlock()
	}
	return n
}

// SetGateClock sets the clock of the Limiter's count of in-flight requests.
func (l *Limiter) SetGateClock(now func() time.Time) {
	l.set.Load().gate.counts.clock = elapsed.New(now)
}
