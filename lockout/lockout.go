package lockout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/bounds"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store"
)

// A Window is one window of a Lockout: Attempts attempts are allowed in any
// span of Window; the next one is refused, not counted, and starts a block
// of Block (none when Block is 0: attempts are refused until the window has
// room), reported as Scope. The zero Window is invalid.
type Window struct {
	Scope    string // reported when this window trips, e.g. "temp" or "long"; 1 to 48 characters from [A-Za-z0-9_.-], one per window
	Attempts int64  // 1 to 10000
	Window   time.Duration
	Block    time.Duration
}

// Config configures a Lockout. Name and Windows are required; the zero
// value of every other field is its default.
type Config struct {
	// Name separates lockouts in the store, e.g. "login" or "verify";
	// 1 to 48 characters from [A-Za-z0-9_.-].
	Name string
	// Windows are checked together; each has its own block.
	Windows []Window
	// FailOpen lets attempts through when the store fails (default: 503).
	FailOpen bool
	// Timeout bounds each store call (default ratekit.DefaultTimeout;
	// below 0: only the caller's context bounds it).
	Timeout time.Duration
	// Observer, when set, receives an observe.Event for every Attempt and
	// Check, with Policy Name, and for every attempt counted against a
	// trusted device, with Policy Name+".device".
	Observer observe.Observer
	// Devices, when set, lets the Lockout trust the devices an account
	// has logged in from (see Devices, AttemptDevice and TrustDevice).
	Devices *Devices
}

// A Decision is the answer of a Lockout, a plain value; the zero Decision, a
// failed call's, allows nothing and names no window.
type Decision struct {
	// Allowed reports whether the attempt may proceed.
	Allowed bool
	// Scope names the window that denies ("" when allowed): the one with
	// the longest wait when several do.
	Scope string
	// Limit is that window's Attempts.
	Limit int64
	// RetryAfter is, when denied, the time until an attempt would pass: the
	// longest block left, or longer when a window would still be full then.
	RetryAfter time.Duration
	// Counts holds the attempts each window counts after the call, in
	// config order; a window that denies counts its Attempts. It is nil for
	// a Trusted attempt, which the windows do not count.
	Counts []int64
	// Trusted reports an attempt counted against a trusted device, not
	// the windows (AttemptDevice).
	Trusted bool
	// Revoked reports that the attempt carried a device token that is
	// revoked (AttemptDevice): the client should drop it.
	Revoked bool

	attempt      *ratekit.Reservation // Attempt's, for Refund; nil from Check
	failuresLeft int64                // a device's attempt: the failures it has left
	blocked      bool                 // refused by a block (a device's: its revocation)
}

// A Lockout counts attempts in its windows (see the package doc). It is safe
// for concurrent use; the zero value is not usable: build it with New.
type Lockout struct {
	cfg     Config
	limiter *ratekit.Limiter
	limits  []ratekit.Limit // the windows' limits, in config order
	prefix  string          // Name + ":", before every subject

	devices  Devices          // Config.Devices with its defaults, when set
	slots    []slot           // the trusted devices' slots; nil without Config.Devices
	surveyor *ratekit.Limiter // peeks at every slot
	now      func() time.Time // the clock of token expiries
}

// New validates cfg and returns a Lockout over s, a store that can refund
// attempts (a store.Settler). Every problem is reported at once, as an error
// matching ratekit.ErrInvalidLimit.
func New(s ratekit.Store, cfg Config) (*Lockout, error) {
	var errs []error
	bad := func(field, reason string) {
		errs = append(errs, &ratekit.LimitError{Limit: cfg.Name, Field: field, Reason: reason})
	}
	duration := func(field string, d time.Duration) {
		if d < bounds.MinWindow || d > bounds.MaxWindow || d%time.Millisecond != 0 {
			bad(field, fmt.Sprintf("must be whole milliseconds from %s to %s (got %s)", bounds.MinWindow, bounds.MaxWindow, d))
		}
	}
	if s == nil {
		bad("store", "is nil; pass memstore.New() or a Redis store")
	} else if !settles(s) {
		bad("store", fmt.Sprintf("(%T) cannot refund attempts; pass memstore.New(), a Redis store or a wrapper of them", s))
	}
	if why := bounds.Name(cfg.Name); why != "" {
		bad("name", why)
	}
	if len(cfg.Windows) == 0 {
		bad("windows", "are missing; give at least one, e.g. {Scope: \"temp\", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute}")
	}
	limits := make([]ratekit.Limit, len(cfg.Windows))
	for i, w := range cfg.Windows {
		field := fmt.Sprintf("window %d ", i+1)
		if why := bounds.Name(w.Scope); why != "" {
			bad(field+"scope", why)
		}
		if slices.ContainsFunc(cfg.Windows[:i], func(o Window) bool { return o.Scope == w.Scope }) {
			bad(field+"scope", fmt.Sprintf("%q names an earlier window too; give each window a scope of its own", w.Scope))
		}
		if w.Attempts < 1 || w.Attempts > bounds.MaxLogQuota {
			bad(field+"attempts", fmt.Sprintf("must be between 1 and %d (got %d)", bounds.MaxLogQuota, w.Attempts))
		}
		duration(field+"window", w.Window)
		if w.Block != 0 {
			duration(field+"block", w.Block)
		}
		limits[i] = ratekit.SlidingLog(w.Attempts, w.Window).Named(w.Scope)
		if w.Block != 0 {
			limits[i] = limits[i].Block(w.Block)
		}
	}
	var devices Devices
	if cfg.Devices != nil {
		devices = cfg.Devices.withDefaults().copyKeys()
		devices.problems(bad)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	l, err := ratekit.New(s, limits...)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = ratekit.DefaultTimeout
	}
	lo := &Lockout{cfg: cfg, limiter: l, limits: limits, prefix: cfg.Name + ":", devices: devices, now: time.Now}
	if cfg.Devices != nil {
		if lo.slots, lo.surveyor, err = newSlots(s, devices); err != nil {
			return nil, err
		}
	}
	return lo, nil
}

// settles reports whether s's prepared forms can refund (store.Settler).
func settles(s ratekit.Store) bool {
	p, err := s.Prepare([]ratekit.Limit{ratekit.SlidingLog(1, time.Minute)})
	_, ok := p.(store.Settler)
	return err == nil && ok
}

// Attempt records an attempt for key and reports whether it may proceed:
// denied while a block lasts, and denied (starting a block) when a window
// is full; a refused attempt is not recorded. Checking and recording are
// one atomic step, so call Attempt before the password or code is checked,
// then Reset on success, or Refund an attempt that should not count.
func (lo *Lockout) Attempt(ctx context.Context, key string) (Decision, error) {
	return lo.do(ctx, lo.limiter, lo.prefix+key, lo.cfg.Name, key, true)
}

// Check reports whether an attempt for key would pass now, recording
// nothing. Use it to inform, and Attempt to decide: a Check followed by a
// record would let parallel attempts through.
func (lo *Lockout) Check(ctx context.Context, key string) (Decision, error) {
	return lo.do(ctx, lo.limiter, lo.prefix+key, lo.cfg.Name, key, false)
}

// Refund gives back the attempt that d, a decision of Attempt, recorded,
// for an attempt that turned out not to count. It never lifts a block, and
// like ratekit.Reservation.Settle it is not cut short by ctx's end. It does
// nothing for a decision that recorded no attempt.
func (lo *Lockout) Refund(ctx context.Context, d Decision) error {
	ctx, cancel := lo.bound(ctx)
	defer cancel()
	return d.attempt.Settle(ctx, 0) // nothing for a nil Reservation or one that charged nothing
}

// Reset forgets key's attempts and blocks, e.g. after a successful login.
func (lo *Lockout) Reset(ctx context.Context, key string) error {
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	ctx, cancel := lo.bound(ctx)
	defer cancel()
	return lo.limiter.Reset(ctx, lo.prefix+key)
}

// bound applies the Timeout to ctx.
func (lo *Lockout) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if lo.cfg.Timeout > 0 {
		return context.WithTimeout(ctx, lo.cfg.Timeout)
	}
	return ctx, func() {}
}

// do records an attempt (record) or checks one for key, on l (the
// windows' Limiter or a device's) and subject, and reports it to the
// observer under policy.
func (lo *Lockout) do(ctx context.Context, l *ratekit.Limiter, subject, policy, key string, record bool) (Decision, error) {
	obs := lo.cfg.Observer
	if key == "" {
		if obs != nil {
			obs.Observe(ctx, observe.Event{Outcome: observe.Invalid, Policy: policy, Cost: 1, Err: ratekit.ErrEmptyKey})
		}
		return Decision{}, ratekit.ErrEmptyKey
	}
	sctx, cancel := lo.bound(ctx)
	defer cancel()
	start := time.Now()
	var res *ratekit.Reservation
	var rd ratekit.Decision
	var err error
	if record {
		if res, err = l.Reserve(sctx, subject, 1); err == nil {
			rd = res.Decision
		}
	} else {
		rd, err = l.Peek(sctx, subject)
	}
	var d Decision
	if err == nil {
		d = lo.decision(l, rd)
		d.attempt = res
	}
	if obs != nil {
		obs.Observe(ctx, lo.event(d, err, policy, key, time.Since(start)))
	}
	return d, err
}

// decision describes rd, the Limiter's decision, in the lockout's terms.
func (lo *Lockout) decision(l *ratekit.Limiter, rd ratekit.Decision) Decision {
	if l != lo.limiter { // a device's: its failures, not the windows
		return Decision{Allowed: rd.Allowed, Limit: rd.Limit.Spec().Quota, failuresLeft: rd.Remaining, blocked: rd.Blocked}
	}
	d := Decision{Allowed: rd.Allowed, Counts: make([]int64, len(lo.limits))}
	for i, l := range lo.limits {
		left := rd.Remaining // one window: the Decision is its state
		if rd.States != nil {
			left = rd.States[i].Remaining
		}
		d.Counts[i] = l.Spec().Quota - left
	}
	if !rd.Allowed {
		d.Scope, d.Limit, d.RetryAfter = rd.Limit.Name(), rd.Limit.Spec().Quota, rd.RetryAfter
	}
	return d
}

// event describes an Attempt or Check for observers, binding the window that
// denied, or the one with the smallest share of its attempts left.
func (lo *Lockout) event(d Decision, err error, policy, key string, latency time.Duration) observe.Event {
	e := observe.Event{Policy: policy, Cost: 1, Subject: key, Latency: latency, Err: err}
	switch {
	case err != nil:
		e.Outcome = observe.Error
		return e
	case !d.Allowed:
		e.Outcome, e.Quota = observe.Denied, d.Limit
		return e
	case d.Counts == nil: // a device's attempt
		e.Quota, e.Remaining = d.Limit, d.failuresLeft
		return e
	}
	for i, l := range lo.limits {
		attempts := l.Spec().Quota
		left := max(attempts-d.Counts[i], 0)
		if i == 0 || left*e.Quota < e.Remaining*attempts {
			e.Quota, e.Remaining = attempts, left
		}
	}
	return e
}
