package ratekit

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// A Limit is one rate limit: an algorithm and its parameters. It is a small
// value (one pointer to its immutable definition), safe to copy and to share
// between goroutines. Two Limits built alike have the same Spec (compare
// Specs, not Limits: == tells whether two Limits are copies of one). Build it with a
// constructor such as FixedWindow or GCRA and name it with Named; the zero
// Limit is invalid. New checks every parameter, so a bad limit is reported
// when the Limiter is built, never at request time.
//
// A limit's parameters are fingerprinted into its storage key: changing them
// starts fresh state, and the old state expires on its own.
type Limit struct {
	d *limitDef // nil in the zero Limit
}

// limitDef is what a Limit is. It is never changed once a Limit holds it:
// a modifier copies it and changes the copy.
type limitDef struct {
	alg       algorithm
	name      string
	quota     int64         // requests per window, or the burst / capacity of a bucket
	rate      float64       // bucket algorithms: requests per period
	period    time.Duration // the window, or the period of the rate
	precision time.Duration // SlidingWindow: bucket width
	maxWait   time.Duration // LeakyBucket in queue mode: the longest delay
	block     time.Duration // penalty after a denial
	params    [3]int64      // custom algorithms: their parameters
	factor    float64       // Suppressed: hard limit = quota × factor
	id        string        // name:algorithm:fingerprint, the storage identity
	named     bool          // named by Named, not by default
	shadow    bool          // decides and counts, never refuses (Shadow)
	// Derived by limit from the fields above, so that Spec is a copy:
	interval         time.Duration // emissionInterval()
	hard             int64         // hardLimit()
	headerQ, headerW int64         // headerQuota(), after interval
}

// zeroDef is the zero Limit's definition. It is never written.
var zeroDef limitDef

// def returns l's definition, which the caller must not change.
func (l Limit) def() *limitDef {
	if l.d == nil {
		return &zeroDef
	}
	return l.d
}

// FixedWindow allows quota requests per window. The window starts with the
// key's first request and its counter expires with it; a client can therefore
// pass up to 2 × quota across a window boundary. Window has millisecond
// resolution.
func FixedWindow(quota int64, window time.Duration) Limit {
	return newDef(algFixedWindow, quota, float64(quota), window).limit()
}

// GCRA allows rate requests per period as a steady flow (one every
// period/rate) with bursts of up to burst requests. Its state is a single
// theoretical arrival time, so memory is constant and Retry-After is exact.
func GCRA(rate float64, period time.Duration, burst int64) Limit {
	return newDef(algGCRA, burst, rate, period).limit()
}

// newDef returns the definition of a limit of alg, named after it.
func newDef(alg algorithm, quota int64, rate float64, period time.Duration) limitDef {
	return limitDef{alg: alg, name: string(alg), quota: quota, rate: rate, period: period}
}

// limit computes c's storage identity and derived values and returns the
// Limit that c defines.
func (c limitDef) limit() Limit {
	c.id = c.name + ":" + string(c.alg) + ":" + c.fingerprint()
	c.interval, c.hard = c.emissionInterval(), c.hardLimit()
	c.headerQ, c.headerW = c.headerQuota()
	return Limit{&c}
}

// Named returns a copy of l with the policy name name. The name appears in the
// RateLimit headers and the error body, and it is part of the storage key:
// limits with the same name and parameters share their counters, in every
// Limiter and every instance that uses them. Names are 1 to 48 characters
// from [A-Za-z0-9_.-]. The default name is the algorithm's, so two unnamed
// limits with equal parameters share their counters too: name the limits of
// each route or purpose apart.
func (l Limit) Named(name string) Limit {
	c := *l.def()
	c.name, c.named = name, true
	return c.limit()
}

// Block returns a copy of l that, once it denies a request, keeps denying
// the subject for d (a penalty), whatever its counters say. Requests during a
// block are not recorded. The block's TTL in the store is its truth. A
// denial's RetryAfter is the longer of the block left and the wait of l's
// own counters, which decide once the block ends: from the block's start to
// its end, a request at the RetryAfter passes.
func (l Limit) Block(d time.Duration) Limit {
	c := *l.def()
	c.block = d
	return c.limit()
}

// Shadow returns a copy of l in shadow mode: it decides and counts as usual,
// but never refuses a request. A request it would have refused passes with
// Decision.ShadowDenied set, and observers see the outcome ShadowDenied, so a
// new limit can be rolled out by watching what it would do. Shadow limits
// share their state with the same limit enforced (shadow mode is not part of
// the storage key), so enforcing a limit later keeps its counts. In a Limiter
// with enforced limits too, a request the enforced limits refuse never
// reaches the shadow ones, and one they admit is charged to them whatever the
// shadow limits say; that costs a second store call per request. The
// rate-limit headers describe the enforced limits, or, when every limit is
// in shadow mode, the shadow ones (WithHeaders(HeadersNone) leaves them out).
func (l Limit) Shadow() Limit {
	c := *l.def()
	c.shadow = true
	return Limit{&c}
}

// Name returns the limit's policy name: the one given to Named, or the
// algorithm's.
func (l Limit) Name() string { return l.def().name }

// Spec describes the limit for stores and tools: its algorithm, identity and
// parameters. Its values are computed when the limit is built, so Spec costs
// a copy.
func (l Limit) Spec() Spec {
	d := l.def()
	return Spec{
		Algorithm: string(d.alg),
		Name:      d.name,
		ID:        d.id,
		Quota:     d.quota,
		Rate:      d.rate,
		Window:    d.period,
		Interval:  d.interval,
		Precision: d.precision,
		MaxWait:   d.maxWait,
		Block:     d.block,
		Factor:    d.factor,
		Hard:      d.hard,
		Params:    d.params,
	}
}

// emissionInterval is the emission interval of a bucket algorithm (GCRA,
// TokenBucket, LeakyBucket): period/rate rounded up to whole microseconds,
// so the rate carries a fixed error below one microsecond per request and
// never drifts. It is 0 for other algorithms.
func (l *limitDef) emissionInterval() time.Duration {
	if !l.alg.bucket() || !(l.rate > 0) {
		return 0
	}
	us := math.Ceil(float64(l.period.Microseconds()) / l.rate)
	if us > float64(maxWindow.Microseconds()) {
		return maxWindow + time.Microsecond
	}
	return time.Duration(us) * time.Microsecond
}

// bucket reports whether a is one of the bucket algorithms, which share the
// emission-interval arithmetic.
func (a algorithm) bucket() bool { return bounds.Bucket(string(a)) }

// fingerprint returns a short hash of the algorithm and its parameters (not
// the name). Stores put it in the key, so new parameters start fresh state.
func (l *limitDef) fingerprint() string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d|%s|%d|%d|%d|%d|%v", l.alg, l.quota, strconv.FormatFloat(l.rate, 'g', -1, 64), l.period,
		l.precision, l.maxWait, l.block, l.params)
	if l.factor != 0 { // only Suppressed: other limits keep their keys
		fmt.Fprintf(h, "|%s", strconv.FormatFloat(l.factor, 'g', -1, 64))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// String describes the limit, e.g. "api: fixed 100 per 1m0s".
func (l Limit) String() string { return l.def().describe() }

// describe is Limit.String.
func (l *limitDef) describe() string {
	var s string
	switch {
	case l.alg.bucket():
		s = fmt.Sprintf("%s: %s %s per %s, burst %d", l.name, l.alg, strconv.FormatFloat(l.rate, 'g', -1, 64), l.period, l.quota)
		if l.maxWait > 0 {
			s += fmt.Sprintf(", queue up to %s", l.maxWait)
		}
	case l.alg == algSlidingWindow:
		s = fmt.Sprintf("%s: sliding %d per %s, buckets of %s", l.name, l.quota, l.period, l.precision)
	case l.alg == algSuppressed:
		s = fmt.Sprintf("%s: suppressed %d per %s, hard %d", l.name, l.quota, l.period, l.hard)
	case l.alg == algInFlight:
		s = fmt.Sprintf("%s: in flight %d, lease %s", l.name, l.quota, l.period)
	default:
		s = fmt.Sprintf("%s: %s %d per %s", l.name, l.alg, l.quota, l.period)
	}
	if l.block > 0 {
		s += fmt.Sprintf(", block %s", l.block)
	}
	return s
}
