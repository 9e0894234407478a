package ratekit

import (
	"time"

	"github.com/ratekit/ratekit/internal/algo"
)

// SlidingWindow allows quota requests in any window of length window,
// estimated from buckets: the buckets inside the window count in full, the
// oldest bucket (partly outside) counts by the fraction of it still inside,
// as if its requests had been spread evenly. The default bucket width is
// window/10 (window when it does not divide by 10); Precision changes it.
// The estimate errs by at most one bucket's requests (see
// docs/architecture.md); Precision(window) is the classic two-window
// estimate, and finer buckets cost one counter each (window/width + 1, at
// most 1000).
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
