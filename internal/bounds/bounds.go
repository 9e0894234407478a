// Package bounds holds the names and the limits on numbers that every
// package of the kit checks alike: the one table of the algorithms' names
// (the engine's Lua dispatches on the same strings), the bounds of every
// number a limit or a call carries, and the checks built on them.
package bounds

import (
	"errors"
	"fmt"
	"time"
)

// The kit's algorithms: the names in ratekit.Spec.Algorithm. They are part
// of every stored key and never change.
const (
	FixedWindow   = "fixed"
	SlidingWindow = "sliding"
	SlidingLog    = "log"
	TokenBucket   = "token"
	LeakyBucket   = "leaky"
	GCRA          = "gcra"
	Suppressed    = "suppressed"
	InFlight      = "inflight"
)

// RetryInFlight is the RetryAfter of a denial by an InFlight limit: a slot
// comes back when a request ends, which no store can foresee, and 1 s is
// the shortest Retry-After.
const RetryInFlight = time.Second

// Builtin lists the kit's algorithm names.
var Builtin = []string{FixedWindow, SlidingWindow, SlidingLog, TokenBucket, LeakyBucket, GCRA, Suppressed, InFlight}

// Bucket reports whether alg is one of the bucket algorithms (GCRA,
// TokenBucket, LeakyBucket), which share the emission-interval arithmetic.
func Bucket(alg string) bool {
	return alg == GCRA || alg == TokenBucket || alg == LeakyBucket
}

// ErrInvalidCost is ratekit.ErrInvalidCost.
var ErrInvalidCost = errors.New("ratekit: invalid cost")

// CheckCost returns an error matching ErrInvalidCost unless cost can be
// charged: 0 (a peek) up to MaxCost.
func CheckCost(cost int64) error {
	if cost < 0 || cost > MaxCost {
		return fmt.Errorf("%w: %d is outside 0..2^53-1", ErrInvalidCost, cost)
	}
	return nil
}

// Bounds that keep every stored number exact (below 2^53, in microseconds
// inside Lua) and every header value representable.
const (
	MaxCost     = 1<<53 - 1            // the largest cost one call may charge
	MaxQuota    = 1<<53 - 1            // the largest quota or burst
	MinWindow   = time.Millisecond     // limits have millisecond resolution
	MaxWindow   = 366 * 24 * time.Hour // the longest horizon of any state
	MaxLogQuota = 10_000               // a sliding log keeps one entry per admitted request
	MaxNameLen  = 48
)

// Name returns why name is not a valid policy name, or "".
func Name(name string) string {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Sprintf("must be 1 to %d characters (got %d)", MaxNameLen, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Sprintf("%q has a character outside [A-Za-z0-9_.-]", name)
		}
	}
	return ""
}

// AlgorithmName returns why a cannot name a custom algorithm, or "".
func AlgorithmName(a string) string {
	for _, b := range Builtin {
		if a == b {
			return "is built in"
		}
	}
	if len(a) == 0 || len(a) > 16 {
		return "must be 1 to 16 characters"
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return "may hold only [a-z0-9_]"
		}
	}
	return ""
}
