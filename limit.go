package ratekit

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/internal/bounds"
)

// A Limit is one rate limit: an algorithm and its parameters. It is a small
// value (one pointer to its immutable definition), safe to copy and to share
// between goroutines. Two Limits built alike have the same Spec (compare
// Specs, not Limits: == tells whether two Limits are copies of one). Build
// it with a constructor such as FixedWindow or GCRA and name it with Named;
// the zero Limit is invalid, and New reports it. A limit's state is
// identified by its name and algorithm, not its numbers: new numbers (an
// override, a redeploy, Limiter.Update) keep the counts by the limit's
// carry rule (see Carry).
type Limit struct {
	d *limitDef // nil in the zero Limit
}

// A Spec describes a Limit to a Store: what the store needs to decide it.
// Users rarely need it; a Limit's String method describes it for people.
// Which fields are set depends on the algorithm; the others are zero. A Spec
// is a plain value, safe to copy; the zero Spec describes no limit.
type Spec struct {
	// (internal/algo.Spec has these fields in this order: each converts to
	// the other.)

	// Algorithm names the algorithm: "fixed", "sliding", "log", "token",
	// "leaky", "gcra", "suppressed", "inflight", "calendar", or a custom name (see
	// Custom). It is part of every stored key and never changes.
	Algorithm string
	// Name is the policy name (Named), reported in headers and bodies.
	Name string
	// ID is the storage identity: name:algorithm, then, for a limit whose
	// state has a shape (a sliding window's bucket width, a calendar's
	// period and zone, a custom algorithm's parameters) or that resets on
	// new numbers (carry.Reset), a fingerprint of those. New numbers
	// otherwise keep the state (see package carry).
	ID string
	// Quota is the quota per window, a bucket's burst or capacity, or a
	// Suppressed limit's soft limit.
	Quota int64
	// Rate is the number of requests per Window of a bucket algorithm.
	Rate float64
	// Window is the window, or the period of the rate.
	Window time.Duration
	// Interval is a bucket's emission interval, Window/Rate rounded up to µs.
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
	// Period is a Calendar limit's period; Location its time zone (nil for
	// windows aligned to the clock, calendar.Every).
	Period   calendar.Period
	Location *time.Location
	// Carry is what the limit's state keeps when its numbers change
	// (Limit.Carry): by default what was used.
	Carry carry.Rule
}

// limitDef is what a Limit is, never changed once a Limit holds it: a
// modifier changes a copy, and limit sets its derived values.
type limitDef struct {
	algo.Spec              // Window is the window, the period of a rate, or a lease
	shadow           bool  // decides and counts, never refuses (Shadow)
	headerQ, headerW int64 // headerQuota()
	periodic         bool  // a Calendar period: its length varies, so headers give the current one's
}

// def returns l's definition, which the caller must not change; a new
// zero definition for the zero Limit.
func (l Limit) def() *limitDef {
	if l.d == nil {
		return &limitDef{}
	}
	return l.d
}

// newDef returns the definition of a limit of alg, named after it.
func newDef(alg string, quota int64, rate float64, period time.Duration) limitDef {
	return limitDef{Spec: algo.Spec{Algorithm: alg, Name: alg, Quota: quota, Rate: rate, Window: period}}
}

// limit computes c's storage identity and derived values and returns the
// Limit that c defines.
func (c limitDef) limit() Limit {
	r := algo.Of(c.Algorithm)
	r.Derive(&c.Spec)
	c.ID = c.Name + ":" + c.Algorithm
	if c.Carry == carry.Reset {
		c.ID += ":" + c.fingerprint() // the key of earlier releases: their counts stay
	} else if shape := r.Shape(&c.Spec); shape != "" {
		c.ID += ":" + hash(shape)
	}
	c.Concurrent = r.Caps()&algo.Holds != 0
	c.headerQ, c.headerW = c.headerQuota(r)
	c.periodic = c.Algorithm == algo.Calendar && c.Location != nil
	return Limit{&c}
}

// Named returns a copy of l with the policy name name, 1 to 48 characters
// from [A-Za-z0-9_.-]. The name appears in the RateLimit headers and the
// error body, and it is part of the storage key: limits with the same name
// and algorithm share their counters in every Limiter and instance, whatever
// their numbers (a sliding window's bucket width, a calendar's period and
// zone, and carry.Reset's numbers set them apart). The default name is the
// algorithm's, so name the limits of each route or purpose apart.
func (l Limit) Named(name string) Limit {
	c := *l.def()
	c.Name = name
	return c.limit()
}

// Block returns a copy of l that, once it denies a request, keeps denying
// the subject for d (a penalty), whatever its counters say; requests during
// a block are not recorded. A denial's RetryAfter is the longer of the block
// left and the wait of l's own counters, so a request at the RetryAfter
// passes.
func (l Limit) Block(d time.Duration) Limit {
	c := *l.def()
	c.Block = d
	return c.limit()
}

// Shadow returns a copy of l in shadow mode: it decides and counts as usual,
// but never refuses a request. A request it would have refused passes with
// Decision.ShadowDenied set (observers see the outcome ShadowDenied), so a
// new limit can be rolled out by watching what it would do; shadow mode is
// not part of the storage key, so enforcing the limit later keeps its counts.
// Beside enforced limits, shadow limits see only the requests those admit, in
// a second store call (see docs/architecture.md). The rate-limit headers
// describe the enforced limits, or the shadow ones when there are no others.
func (l Limit) Shadow() Limit {
	c := *l.def()
	c.shadow = true
	return Limit{&c}
}

// Name returns the limit's policy name: the one given to Named, or the
// algorithm's.
func (l Limit) Name() string { return l.def().Name }

// Spec describes the limit for stores and tools: its algorithm, identity and
// parameters, computed when the limit was built.
func (l Limit) Spec() Spec { return Spec(l.def().Spec) }

// With returns l with the numbers of s (Quota, Rate, Window, MaxWait,
// Block, Factor), every other field of s ignored: the same limit, with
// other numbers, under l's storage identity (its ID, even under
// carry.Reset, whose stores drop the state themselves when the numbers in
// force change). Stores use it to report the numbers in force (an
// override, one instance's share); the error, a *LimitError matching
// ErrInvalidLimit, names a number that is invalid.
func (l Limit) With(s Spec) (Limit, error) {
	c := *l.def()
	c.Quota, c.Rate, c.Window, c.MaxWait, c.Block, c.Factor = s.Quota, s.Rate, s.Window, s.MaxWait, s.Block, s.Factor
	n := c.limit()
	if err := n.validate(); err != nil {
		return Limit{}, err
	}
	n.d.ID = l.def().ID // one limit: carry.Reset's fingerprint is of its own numbers
	return n, nil
}

// fingerprint returns the text of the algorithm and every parameter (not
// the name) that a carry.Reset limit's ID hashes: new numbers, new state.
func (l *limitDef) fingerprint() string {
	s := fmt.Sprintf("%s|%d|%s|%d|%d|%d|%d|%v", l.Algorithm, l.Quota, strconv.FormatFloat(l.Rate, 'g', -1, 64), l.Window,
		l.Precision, l.MaxWait, l.Block, l.Params)
	if l.Algorithm == algo.Calendar {
		s += fmt.Sprintf("|%s|%s", l.Period, l.Location)
	}
	if l.Factor != 0 {
		s += "|" + strconv.FormatFloat(l.Factor, 'g', -1, 64)
	}
	return hash(s)
}

// hash returns 16 hex digits of the FNV-1a hash of s.
func hash(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}

// Carry returns a copy of l whose state, when its numbers change, keeps
// what rule says (see package carry): by default what was used.
// carry.Reset makes the numbers part of the limit's identity, as the
// Limits of earlier releases: new numbers start fresh state.
func (l Limit) Carry(rule carry.Rule) Limit {
	c := *l.def()
	c.Carry = rule
	return c.limit()
}

// String describes the limit, e.g. "api: fixed 100 per 1m0s".
func (l Limit) String() string {
	d := l.def()
	s := algo.Of(d.Algorithm).Describe(&d.Spec)
	if d.Block > 0 {
		s += fmt.Sprintf(", block %s", d.Block)
	}
	return s
}

// validate reports whether l can be enforced. The error is a *LimitError
// (matching ErrInvalidLimit) naming the parameter at fault.
func (l Limit) validate() error {
	d := l.def()
	var f algo.Fault
	switch {
	case d.Algorithm == "":
		f = algo.Fault{Field: "algorithm", Reason: "is missing; build limits with a constructor such as ratekit.FixedWindow"}
	case bounds.Name(d.Name) != "":
		f = algo.Fault{Field: "name", Reason: bounds.Name(d.Name)}
	case d.Carry > carry.Reset:
		f = algo.Fault{Field: "carry", Reason: fmt.Sprintf("must be carry.Used or carry.Reset (got %d)", d.Carry)}
	default:
		f = algo.Of(d.Algorithm).Validate(&d.Spec, d.shadow)
	}
	if f.Field == "" {
		return nil
	}
	return &LimitError{Limit: d.Name, Field: f.Field, Reason: f.Reason}
}
