package ratekit

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit/internal/algo"
)

// InFlight allows at most n requests of a subject in flight at once, across
// every instance that shares the store: a concurrency limit. An admitted
// request holds one slot, whatever its cost, from admission until it ends:
// Middleware and the adapters end it when the handler returns or panics;
// code that calls Limiter.Reserve ends it with Reservation.Settle or
// Release. n is at most 10,000.
//
// Each slot is a lease (10 s unless Lease says otherwise) that a
// Reservation renews every quarter of the lease while the request runs: a
// slow request keeps its slot while its instance lives, through two failed
// renewals in a row, and a dead instance's slots come back within one
// lease. A denial's RetryAfter is 1 s: no store can foresee when a slot
// comes back.
//
// Each instance also refuses, without a store call and with Decision.Cached
// set, a request that would give it more than n requests of a subject
// holding or asking for a slot (n the smallest of the Limiter's InFlight
// limits), so a burst cannot make the store calls time out. A request that
// fails open on a store error keeps its place in that count until it ends:
// a failing store leaves n per instance (see docs/architecture.md).
//
// An InFlight limit reports no window: RateLimit-Policy describes it with
// qu="concurrent-requests", and RateLimit gives the slots left (r) without
// t. It takes no Block and no Shadow mode.
func InFlight(n int64) Limit {
	return newDef(algo.InFlight, n, float64(n), 10*time.Second).limit()
}

// Lease returns a copy of an InFlight limit whose slots are leased for d
// (whole milliseconds, at least 10 ms): the bound on how long a slot held by
// a dead instance stays taken, and four times the interval at which a
// live request renews it. Longer leases cost fewer renewals; shorter ones
// give slots back sooner after a crash.
func (l Limit) Lease(d time.Duration) Limit {
	c := *l.def()
	c.Window = d
	return c.limit()
}

// errInFlightAllow is AllowN's error on a Limiter with InFlight limits.
var errInFlightAllow = fmt.Errorf("%w: a Limiter with an InFlight limit admits requests through Reserve, whose Reservation releases the slot; use Reserve (Middleware does)", ErrInvalidLimit)
