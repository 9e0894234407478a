package lease

import (
	"fmt"
	"time"
)

// DefaultRefillInterval is how long a lease lasts at the instance's observed
// rate unless WithRefillInterval says otherwise.
const DefaultRefillInterval = 100 * time.Millisecond

// DefaultMargin is how long before the end of the shared window a lease
// stops being spent unless WithMargin says otherwise: the stores' clocks
// read whole milliseconds.
const DefaultMargin = time.Millisecond

// DefaultMaxSubjects is the number of subjects a Store leases for at once
// unless WithMaxSubjects says otherwise.
const DefaultMaxSubjects = 1024

// An Option configures a Store. Options are values built by the With
// functions of this package, safe to share.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is the options' settings, kept by the Store they build.
type config struct {
	maxLease    int64 // 0 until New sets the default, 1% of the smallest quota
	interval    time.Duration
	margin      time.Duration
	maxSubjects int64
	now         func() time.Time
	errs        []error // the options' refusals, reported by New
}

// WithMaxLease bounds every lease to n units, 1 to the smallest quota of
// the leased limits (default: 1% of it, at least 1): each instance holds at
// most n units of a subject that no other instance can use.
func WithMaxLease(n int64) Option {
	return optionFunc(func(c *config) {
		if n < 1 {
			c.errs = append(c.errs, fmt.Errorf("ratekit: lease: WithMaxLease(%d): a lease must hold at least 1 unit", n))
			return
		}
		c.maxLease = n
	})
}

// WithRefillInterval sizes each lease to last about d at the rate this
// instance spent its last one (default DefaultRefillInterval), within
// WithMaxLease, or the time left in the window when less. d must be
// positive.
func WithRefillInterval(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("ratekit: lease: WithRefillInterval(%s): the interval must be positive", d))
			return
		}
		c.interval = d
	})
}

// WithMargin sets how long before the end of the shared window a lease
// stops being spent (default DefaultMargin; negative values mean 0). Use 0
// only with an inner store on the Store's own clock, as tests do.
func WithMargin(d time.Duration) Option {
	return optionFunc(func(c *config) { c.margin = max(d, 0) })
}

// WithMaxSubjects bounds the subjects the Store leases for at once (default
// DefaultMaxSubjects; n < 1 keeps the default). At the bound, after
// dropping the subjects whose leases have lapsed, calls about a new subject
// go to the inner store unleased.
func WithMaxSubjects(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxSubjects = int64(n)
		}
	})
}

// WithClock makes the Store read the local time from now, which must be
// safe for concurrent use, instead of the monotonic clock (for tests).
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) {
		if now != nil {
			c.now = now
		}
	})
}
