package ratekit

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit/internal/algo"
)

// defaultLease is the lease of an InFlight limit's slots unless Lease says
// otherwise: the longest a slot outlives an instance that died holding it.
const defaultLease = 10 * time.Second

// InFlight allows at most n requests of a subject in flight at once, across
// every instance that shares the store: a concurrency limit. An admitted
// request holds one slot, whatever its cost, from admission until it ends:
// Middleware (and the adapters) end it when the handler returns or panics,
// even when the client went away before (a handler that honours its
// context returns early); code that calls Limiter.Reserve ends it with
// Reservation.Settle or Release. n is at most 10,000.
//
// Each slot is a lease (10 s unless Lease says otherwise) that a
// Reservation renews every quarter of the lease while the request runs,
// each renewal given at most that quarter (and 1 s): a slow request keeps
// its slot while its instance lives, through two failed renewals in a row,
// and the slots of an instance that dies come back within one lease. A
// denial's RetryAfter is 1 s: a slot comes back when a request ends, which
// no store can foresee.
//
// Each instance also counts its own requests of a subject that hold a slot
// or are asking the store for one, and refuses, without a store call, one
// that would make them more than n (the smallest n of the Limiter's
// InFlight limits), as the store would but with Decision.Cached set: a
// burst on one subject costs the store at most n calls at a time from each
// instance, so it cannot make the store calls that enforce the limit time
// out. When the store fails, the error policy decides as for any limit, but
// a request that fails open holds its place in that count until it ends:
// an InFlight limit whose store fails falls back to n per instance.
//
// An InFlight limit reports no window: RateLimit-Policy describes it with
// qu="concurrent-requests", and RateLimit gives the slots left (r) without
// t. It takes no Block and no Shadow mode.
func InFlight(n int64) Limit {
	return newDef(algo.InFlight, n, float64(n), defaultLease).limit()
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

// inFlight reports whether l is an InFlight limit.
func (l Limit) inFlight() bool { return l.def().Concurrent }

// errInFlightAllow is AllowN's error on a Limiter with InFlight limits.
var errInFlightAllow = fmt.Errorf("%w: a Limiter with an InFlight limit admits requests through Reserve, whose Reservation releases the slot; use Reserve (Middleware does)", ErrInvalidLimit)
