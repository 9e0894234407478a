package store

import (
	"github.com/ratekit/ratekit/internal/bounds"
)

// The names in ratekit.Spec.Algorithm of the kit's algorithms. They are part
// of every stored key and never change.
const (
	FixedWindow   = bounds.FixedWindow
	SlidingWindow = bounds.SlidingWindow
	SlidingLog    = bounds.SlidingLog
	TokenBucket   = bounds.TokenBucket
	LeakyBucket   = bounds.LeakyBucket
	GCRA          = bounds.GCRA
	Suppressed    = bounds.Suppressed
	InFlight      = bounds.InFlight
)

// Bucket reports whether alg is one of the bucket algorithms (GCRA,
// TokenBucket, LeakyBucket), which share the emission-interval arithmetic.
func Bucket(alg string) bool { return bounds.Bucket(alg) }

// RetryInFlight is the RetryAfter of a denial by an InFlight limit: a slot
// comes back when a request ends, which no store can foresee, and 1 s is
// the shortest Retry-After.
const RetryInFlight = bounds.RetryInFlight
