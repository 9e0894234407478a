package ratekit

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"time"
)

// Algorithm names a rate-limiting algorithm. Its value is part of every
// stored key, so it never changes.
type Algorithm string

// The algorithms of the kit.
const (
	// AlgFixedWindow counts requests in a window that starts at the key's
	// first request and lasts the window length.
	AlgFixedWindow Algorithm = "fixed"
	// AlgGCRA is the generic cell rate algorithm: a steady rate with a burst.
	AlgGCRA Algorithm = "gcra"
)

// Bounds that keep every stored number exact (below 2^53, in microseconds
// inside Lua) and every header value representable.
const (
	// MaxCost is the largest cost one call may charge (2^53 − 1).
	MaxCost = 1<<53 - 1
	// MaxQuota is the largest quota or burst a limit may have.
	MaxQuota = 1<<53 - 1
	// MinWindow is the shortest window or period; limits have millisecond
	// resolution.
	MinWindow = time.Millisecond
	// MaxWindow is the longest horizon a limit may keep state for.
	MaxWindow = 366 * 24 * time.Hour
)

// A Limit is one rate limit: an algorithm and its parameters. It is a small
// value, safe to copy and to share between goroutines. Build it with a
// constructor such as FixedWindow or GCRA and name it with Named; the zero
// Limit is invalid. Parameters are checked by Validate, which New calls, so a
// bad limit is reported when the Limiter is built, never at request time.
//
// A limit's parameters are fingerprinted into its storage key: changing them
// starts fresh state, and the old state expires on its own.
type Limit struct {
	alg    Algorithm
	name   string
	quota  int64         // FixedWindow: requests per window; GCRA: burst
	rate   float64       // GCRA: requests per period
	period time.Duration // FixedWindow: window; GCRA: period of rate
	id     string        // name:algorithm:fingerprint, the storage identity
}

// FixedWindow allows quota requests per window. The window starts with the
// key's first request and its counter expires with it; a client can therefore
// pass up to 2 × quota across a window boundary. Window has millisecond
// resolution.
func FixedWindow(quota int64, window time.Duration) Limit {
	return newLimit(AlgFixedWindow, quota, float64(quota), window)
}

// GCRA allows rate requests per period as a steady flow (one every
// period/rate) with bursts of up to burst requests. Its state is a single
// theoretical arrival time, so memory is constant and Retry-After is exact.
func GCRA(rate float64, period time.Duration, burst int64) Limit {
	return newLimit(AlgGCRA, burst, rate, period)
}

func newLimit(alg Algorithm, quota int64, rate float64, period time.Duration) Limit {
	l := Limit{alg: alg, name: string(alg), quota: quota, rate: rate, period: period}
	l.id = l.name + ":" + string(alg) + ":" + l.Fingerprint()
	return l
}

// Named returns a copy of l with the policy name name. The name appears in the
// RateLimit headers and the error body, and it is part of the storage key:
// limits with the same name and parameters share their counters, in every
// Limiter and every instance that uses them. Names are 1 to 48 characters
// from [A-Za-z0-9_.-]. The default name is the algorithm's.
func (l Limit) Named(name string) Limit {
	l.name = name
	l.id = name + ":" + string(l.alg) + ":" + l.Fingerprint()
	return l
}

// Algorithm returns the limit's algorithm.
func (l Limit) Algorithm() Algorithm { return l.alg }

// Name returns the limit's policy name.
func (l Limit) Name() string { return l.name }

// Window returns the window (FixedWindow) or the period of the rate (GCRA).
func (l Limit) Window() time.Duration { return l.period }

// Burst returns how many requests may pass at once: the quota of a
// FixedWindow, the burst of a GCRA.
func (l Limit) Burst() int64 { return l.quota }

// Rate returns the number of requests per Window.
func (l Limit) Rate() float64 { return l.rate }

// Interval returns the GCRA emission interval, period/rate rounded up to
// whole microseconds. It is 0 for other algorithms.
func (l Limit) Interval() time.Duration {
	if l.alg != AlgGCRA || !(l.rate > 0) {
		return 0
	}
	us := math.Ceil(float64(l.period.Microseconds()) / l.rate)
	if us > float64(MaxWindow.Microseconds()) {
		return MaxWindow + time.Microsecond
	}
	return time.Duration(us) * time.Microsecond
}

// ID returns the limit's storage identity, name:algorithm:fingerprint.
func (l Limit) ID() string { return l.id }

// Fingerprint returns a short hash of the algorithm and its parameters (not
// the name). Stores put it in the key, so new parameters start fresh state.
func (l Limit) Fingerprint() string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d|%s|%d", l.alg, l.quota, strconv.FormatFloat(l.rate, 'g', -1, 64), l.period)
	return fmt.Sprintf("%016x", h.Sum64())
}

// String describes the limit, e.g. "api: fixed 100 per 1m0s".
func (l Limit) String() string {
	switch l.alg {
	case AlgGCRA:
		return fmt.Sprintf("%s: gcra %s per %s, burst %d", l.name, strconv.FormatFloat(l.rate, 'g', -1, 64), l.period, l.quota)
	default:
		return fmt.Sprintf("%s: %s %d per %s", l.name, l.alg, l.quota, l.period)
	}
}
