package ratekit

import "time"

// A Spec describes a Limit to a Store: what the store needs to decide it.
// Users rarely need it; a Limit's String method describes it for people.
// Which fields are set depends on the algorithm; the others are zero. A Spec
// is a plain value, safe to copy; the zero Spec describes no limit.
type Spec struct {
	// (internal/algo.Spec has these fields in this order: each converts to
	// the other.)

	// Algorithm names the algorithm: "fixed", "sliding", "log", "token",
	// "leaky", "gcra", "suppressed", "inflight", or a custom name (see
	// Custom). It is part of every stored key and never changes.
	Algorithm string
	// Name is the policy name (Named), reported in headers and bodies.
	Name string
	// ID is the storage identity, name:algorithm:fingerprint, where the
	// fingerprint hashes every parameter: new parameters start fresh state.
	ID string
	// Quota is the quota per window, or the burst or capacity of a bucket,
	// or a Suppressed limit's soft limit.
	Quota int64
	// Rate is the number of requests per Window of a bucket algorithm.
	Rate float64
	// Window is the window, or the period of the rate.
	Window time.Duration
	// Interval is a bucket algorithm's emission interval: Window/Rate
	// rounded up to whole microseconds.
	Interval time.Duration
	// Precision is the bucket width of a SlidingWindow or Suppressed limit.
	Precision time.Duration
	// MaxWait is the longest delay of a LeakyBucket in queue mode.
	MaxWait time.Duration
	// Block is the penalty after a denial (Limit.Block).
	Block time.Duration
	// Factor is a Suppressed limit's hard-limit factor; Hard its hard
	// limit, floor(Quota × Factor).
	Factor float64
	Hard   int64
	// Params are a custom algorithm's parameters.
	Params [3]int64
	// Concurrent reports a limit on requests in flight (InFlight), not on
	// requests over time: headers give it qu="concurrent-requests".
	Concurrent bool
}
