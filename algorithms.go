package ratekit

import (
	"time"

	"github.com/ratekit/ratekit/internal/algo"
)

// FixedWindow allows quota requests per window. The window starts with the
// key's first request and its counter expires with it; a client can therefore
// pass up to 2 × quota across a window boundary. Window has millisecond
// resolution.
func FixedWindow(quota int64, window time.Duration) Limit {
	return newDef(algo.FixedWindow, quota, float64(quota), window).limit()
}

// GCRA allows rate requests per period as a steady flow (one every
// period/rate) with bursts of up to burst requests. Its state is a single
// theoretical arrival time, so memory is constant and Retry-After is exact.
func GCRA(rate float64, period time.Duration, burst int64) Limit {
	return newDef(algo.GCRA, burst, rate, period).limit()
}

// SlidingWindow allows quota requests in any window of length window,
// estimated from buckets: the buckets inside the window count in full, the
// oldest bucket (partly outside) counts by the fraction of it still inside,
// as if its requests had been spread evenly, which errs by at most one
// bucket's requests (see docs/architecture.md). The default bucket width is
// window/10 (window when it does not divide by 10); Precision changes it,
// at one counter per bucket (window/width + 1, at most 1000).
func SlidingWindow(quota int64, window time.Duration) Limit {
	c := newDef(algo.SlidingWindow, quota, float64(quota), window)
	c.Precision = algo.DefaultWidth(window)
	return c.limit()
}

// Precision returns a copy of a SlidingWindow with buckets of width d, which
// must be whole milliseconds and divide the window.
func (l Limit) Precision(d time.Duration) Limit {
	c := *l.def()
	c.Precision = d
	return c.limit()
}

// SlidingLog allows quota requests in any window of length window, exactly:
// it keeps one entry per admitted request (unique members, so bursts within
// one microsecond are all counted). For small quotas such as login
// attempts; quota is at most 10,000.
func SlidingLog(quota int64, window time.Duration) Limit {
	return newDef(algo.SlidingLog, quota, float64(quota), window).limit()
}

// TokenBucket allows bursts of up to burst requests and refills rate tokens
// per period, continuously. Its state is kept exactly as microseconds of
// credit (the time at which the bucket will be full), so refills never
// accumulate rounding error; it decides exactly as GCRA with the same
// parameters, under its familiar name and keys of its own.
func TokenBucket(rate float64, per time.Duration, burst int64) Limit {
	return newDef(algo.TokenBucket, burst, rate, per).limit()
}

// LeakyBucket holds up to capacity requests and leaks leak of them per
// period. As a meter (the default) it denies a request that would overflow
// the bucket. Queue turns it into a shaper.
func LeakyBucket(capacity int64, leak float64, per time.Duration) Limit {
	return newDef(algo.LeakyBucket, capacity, leak, per).limit()
}

// Queue returns a copy of a LeakyBucket in queue mode: an admitted request
// gets Decision.Delay, the time until its turn at the leak rate, so that
// requests leave at a smooth, constant rate; Middleware waits the delay out
// before calling the handler. A request whose delay would exceed maxWait
// (or that would overflow the bucket) is denied.
func (l Limit) Queue(maxWait time.Duration) Limit {
	c := *l.def()
	c.MaxWait = maxWait
	return c.limit()
}

// Custom returns a limit run by a custom algorithm registered with a store
// (see the Redis store's WithAlgorithm): alg names it (1 to 16 characters
// from [a-z0-9_], not a built-in name), capacity is its quota for headers
// and "can never pass" checks, params its own parameters.
func Custom(alg string, capacity int64, window time.Duration, params [3]int64) Limit {
	c := newDef(alg, capacity, float64(capacity), window)
	c.Params = params
	return c.limit()
}

// Suppressed returns a limit that degrades gracefully instead of cutting off:
// the suppressed strategy of trypema (https://docs.rs/trypema). It counts
// every call, admitted or declined, in a sliding window of buckets (width
// window/10), and admits all calls up to soft, none once its admitted calls
// would exceed the hard limit floor(soft × factor), and in between a
// shrinking share (docs/architecture.md has the probability), reporting the
// suppression factor (Decision.Suppression).
//
// Because declined calls count, a client that keeps calling keeps itself
// suppressed; Retry-After is the time until the window's calls drop to
// soft − cost, when a call passes for sure (for a cost above soft, until
// the window is empty). factor must be at least 1. Stores draw the uniform
// value (their WithRandom options), one per call for all of its Suppressed
// limits, Peek included. A cost above the hard limit can never pass and is
// not counted.
func Suppressed(soft int64, window time.Duration, factor float64) Limit {
	c := newDef(algo.Suppressed, soft, float64(soft), window)
	c.Factor = factor
	c.Precision = algo.DefaultWidth(window)
	return c.limit()
}

// InFlight allows at most n requests of a subject in flight at once, across
// every instance that shares the store: a concurrency limit. An admitted
// request holds one slot, whatever its cost, from admission until it ends:
// Middleware and the adapters end it when the handler returns or panics;
// code that calls Limiter.Reserve ends it with Reservation.Settle or
// Release. n is at most 10,000.
//
// Each slot is a lease (10 s unless Lease says otherwise), renewed while the
// request runs, so a dead instance's slots come back within one lease; a
// denial's RetryAfter is 1 s. Each instance also refuses, without a store
// call and with Decision.Cached set, a request that would give it more than
// n of a subject's requests in flight, failing-open ones included (see
// docs/architecture.md, "A request's life").
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
