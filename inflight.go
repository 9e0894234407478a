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
// Each slot is a lease that expires unless renewed: a Reservation renews
// its slots every quarter of the lease while the request runs, each renewal
// given at most that quarter (and 1 s) to reach the store, so a slow
// request keeps its slot while its instance lives, through two failed
// renewals in a row, and the slots of an instance that dies come back
// within one lease (10 s unless Lease says otherwise). A denial's
// RetryAfter is 1 s, the shortest Retry-After: a slot comes back when a
// request ends, which no store can foresee.
//
// Each instance also counts its own requests of a subject that hold a slot
// or are asking the store for one, and refuses, without a store call, a
// request that would make them more than n (the smallest n of the
// Limiter's InFlight limits): a burst on one subject costs the store at
// most n calls at a time from each instance, so it cannot make the very
// store calls time out that enforce the limit. Such a refusal answers as
// the store's does (429, Retry-After 1 s), with Decision.Cached set. When
// the store fails or times out, the error policy decides as for any limit,
// with one difference: a request that fails open still holds its place in
// that count until it ends, so an InFlight limit whose store fails never
// admits without bound: it falls back to n per instance. Failing closed,
// such a request gets a 503.
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
