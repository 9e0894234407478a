package lockout

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/bounds"
	"github.com/ratekit/ratekit/observe"
)

// A Window is one window of a Lockout: Attempts attempts are allowed per
// Window; the next one starts a block of Block, reported as Scope.
//
// Threshold: Attempts N lets attempts 1..N through and blocks the N+1-th.
// (A ">= threshold" limiter with threshold T, as in some designs, blocks the
// T-th attempt: that is Attempts T-1 here.)
type Window struct {
	Scope    string // reported when this window trips, e.g. "temp" or "long"; 1 to 48 characters from [A-Za-z0-9_.-]
	Attempts int64
	Window   time.Duration
	Block    time.Duration
}

// Config configures a Lockout. Name and Windows are required.
type Config struct {
	// Name separates lockouts in the store, e.g. "login" or "verify";
	// 1 to 48 characters from [A-Za-z0-9_.-].
	Name string
	// Windows are checked together; each has its own block.
	Windows []Window
	// ExtendBlock records attempts made during a block and restarts the
	// block with each. By default they are neither recorded nor extend it.
	ExtendBlock bool
	// FailOpen lets attempts through when the store fails. By default a
	// lockout fails closed: Enforce and Middleware answer 503.
	FailOpen bool
	// Timeout bounds each store call of Middleware, Enforce, Attempt, Check,
	// Refund and Reset (default ratekit.DefaultTimeout, 100 ms; below 0: only
	// the caller's context bounds it).
	Timeout time.Duration
	// Observer, when set, receives every Attempt and Check (and so every
	// request of Middleware and Enforce) as an observe.Event whose Policy is
	// Name. See package observe.
	Observer observe.Observer
}

// A Decision is the answer of a Lockout. The zero Decision denies nothing.
type Decision struct {
	// Allowed reports whether the attempt may proceed.
	Allowed bool
	// Scope names the window whose block denies ("" when allowed).
	Scope string
	// Limit is that window's Attempts.
	Limit int64
	// RetryAfter is, when denied, the time until an attempt would pass: the
	// longest block left, or longer when a window would still be full then.
	RetryAfter time.Duration
	// Counts holds the attempts counted in each window, in config order.
	Counts []int64
	// Attempt identifies the attempt this call recorded ("" when none), for
	// Refund.
	Attempt string
}

// Op is what a Store is asked to do.
type Op uint8

// Lockout operations.
const (
	// Check reports whether the subject is blocked, recording nothing.
	Check Op = iota
	// Attempt records an attempt (after checking the block) and starts the
	// block of every window it takes past its Attempts.
	Attempt
	// Reset forgets the subject's attempts and blocks.
	Reset
	// Refund removes one recorded attempt (Decision.Attempt).
	Refund
)

// A Store runs lockout operations atomically. Both stores of the kit
// implement it; store/storetest.RunLockout checks an implementation.
//
// A denied Decision's RetryAfter is the time until an attempt would pass:
// the longest block in force, or, when longer, the time until every window
// has room for one more attempt (the entry that fills a window to its
// Attempts leaves it).
type Store interface {
	// Lockout runs op for key under p; attempt is the attempt to remove
	// for Refund, "" otherwise.
	Lockout(ctx context.Context, key string, p *Policy, op Op, attempt string) (Decision, error)
}

// Policy is a validated Config, as stores receive it.
type Policy struct {
	Config
	id string // name:fingerprint, the storage identity
}

// ID returns the policy's storage identity, name:fingerprint.
func (p *Policy) ID() string { return p.id }

// Longest returns the longest window.
func (p *Policy) Longest() time.Duration {
	var d time.Duration
	for _, w := range p.Windows {
		d = max(d, w.Window)
	}
	return d
}

// A Lockout protects login and verification endpoints: it counts attempts
// (not admitted requests) in several windows at once, and blocks a subject
// whose attempts exceed a window's allowance for that window's block. A
// blocked subject stays blocked for the whole block, whatever its windows
// say. A Lockout is safe for concurrent use; the zero value is not usable:
// build it with New.
type Lockout struct {
	store  Store
	policy *Policy
}

// New validates cfg and returns a Lockout over store. Every problem is
// reported at once, as an error matching ratekit.ErrInvalidLimit.
func New(store Store, cfg Config) (*Lockout, error) {
	var errs []error
	bad := func(field, reason string) {
		errs = append(errs, &ratekit.LimitError{Limit: cfg.Name, Field: field, Reason: reason})
	}
	if store == nil {
		bad("store", "is nil; pass memstore.New() or a Redis store")
	}
	if why := bounds.Name(cfg.Name); why != "" {
		bad("name", why)
	}
	if len(cfg.Windows) == 0 {
		bad("windows", "are missing; give at least one, e.g. {Scope: \"temp\", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute}")
	}
	h := fnv.New64a()
	for i, w := range cfg.Windows {
		field := fmt.Sprintf("window %d ", i+1)
		if why := bounds.Name(w.Scope); why != "" {
			bad(field+"scope", why)
		}
		if w.Attempts < 1 || w.Attempts > bounds.MaxLogQuota {
			bad(field+"attempts", fmt.Sprintf("must be between 1 and %d (got %d)", bounds.MaxLogQuota, w.Attempts))
		}
		for _, d := range []struct {
			name string
			v    time.Duration
		}{{"window", w.Window}, {"block", w.Block}} {
			if d.v < bounds.MinWindow || d.v > bounds.MaxWindow || d.v%time.Millisecond != 0 {
				bad(field+d.name, fmt.Sprintf("must be whole milliseconds from %s to %s (got %s)", bounds.MinWindow, bounds.MaxWindow, d.v))
			}
		}
		fmt.Fprintf(h, "%d|%d|%d|%t;", w.Attempts, w.Window, w.Block, cfg.ExtendBlock)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = ratekit.DefaultTimeout
	}
	cfg.Windows = append([]Window(nil), cfg.Windows...)
	p := &Policy{Config: cfg, id: fmt.Sprintf("%s:%016x", cfg.Name, h.Sum64())}
	return &Lockout{store: store, policy: p}, nil
}

// Attempt records an attempt for key and reports whether it may proceed:
// denied while a block lasts, and denied (starting a block) when it takes a
// window past its Attempts. Checking and recording are one atomic step, so
// parallel attempts cannot slip past the allowance: call Attempt before the
// attempt is tried (the password or the code checked), then Reset on success.
// To count only failures, Refund the attempt when it did not fail; the
// failure-only Middleware does this.
func (lo *Lockout) Attempt(ctx context.Context, key string) (Decision, error) {
	return lo.do(ctx, key, Attempt, "")
}

// Check reports whether key is blocked, recording nothing. A Check followed
// by a later record would let parallel attempts through: use it to inform,
// and Attempt to decide.
func (lo *Lockout) Check(ctx context.Context, key string) (Decision, error) {
	return lo.do(ctx, key, Check, "")
}

// Refund removes the attempt that Attempt recorded (its decision's Attempt),
// for an attempt that turned out not to count.
func (lo *Lockout) Refund(ctx context.Context, key, attempt string) error {
	if attempt == "" {
		return nil
	}
	_, err := lo.do(ctx, key, Refund, attempt)
	return err
}

// Reset forgets key's attempts and blocks, e.g. after a successful login.
func (lo *Lockout) Reset(ctx context.Context, key string) error {
	_, err := lo.do(ctx, key, Reset, "")
	return err
}

func (lo *Lockout) do(ctx context.Context, key string, op Op, attempt string) (Decision, error) {
	obs := lo.policy.Observer
	if op != Check && op != Attempt {
		obs = nil
	}
	if key == "" {
		if obs != nil {
			obs.Observe(ctx, observe.Event{Outcome: observe.Invalid, Policy: lo.policy.Name, Cost: 1, Err: ratekit.ErrEmptyKey})
		}
		return Decision{}, ratekit.ErrEmptyKey
	}
	sctx := ctx
	if lo.policy.Timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, lo.policy.Timeout)
		defer cancel()
	}
	if obs == nil {
		return lo.store.Lockout(sctx, key, lo.policy, op, attempt)
	}
	start := time.Now()
	d, err := lo.store.Lockout(sctx, key, lo.policy, op, attempt)
	obs.Observe(ctx, lo.event(d, err, key, time.Since(start)))
	return d, err
}

// event describes an Attempt or Check for observers: the binding window is
// the one that denied, or the one with the smallest share of its attempts
// left.
func (lo *Lockout) event(d Decision, err error, key string, latency time.Duration) observe.Event {
	e := observe.Event{Policy: lo.policy.Name, Cost: 1, Subject: key, Latency: latency, Err: err}
	switch {
	case err != nil:
		e.Outcome = observe.Error
		return e
	case !d.Allowed:
		e.Outcome, e.Quota = observe.Denied, lo.window(d.Scope).Attempts
		return e
	}
	for i, w := range lo.policy.Windows {
		left := w.Attempts
		if i < len(d.Counts) {
			left = max(w.Attempts-d.Counts[i], 0)
		}
		if i == 0 || left*e.Quota < e.Remaining*w.Attempts {
			e.Quota, e.Remaining = w.Attempts, left
		}
	}
	return e
}

// Enforce is the one-call form for handlers: it records an attempt and
// returns nil when it may proceed, or an *ErrorResponse to send: 429
// TOO_MANY_ATTEMPTS with the block's Retry-After, 503 SERVICE_UNAVAILABLE
// when the store fails (nil instead when FailOpen), 400 for an empty key.
// Write it with its Write or ServeHTTP method.
func (lo *Lockout) Enforce(ctx context.Context, key string) error {
	if e := lo.Response(lo.Attempt(ctx, key)); e != nil {
		return e
	}
	return nil
}

// Response maps the result of Attempt (or Check) to the response to send, or
// nil to go on: 429 TOO_MANY_ATTEMPTS when denied ("Too many attempts. Try
// again in N seconds.", with context.retryAfter, the window's attempts as
// limit and its scope as policy), 503 when the store failed (nil when
// FailOpen), 400 for an empty key.
func (lo *Lockout) Response(d Decision, err error) *ratekit.ErrorResponse {
	switch {
	case errors.Is(err, ratekit.ErrEmptyKey):
		return ratekit.BadRequestResponse()
	case err != nil && lo.policy.FailOpen:
		return nil
	case err != nil:
		return ratekit.UnavailableResponse(time.Second)
	case !d.Allowed:
		w := lo.window(d.Scope)
		limit := ratekit.FixedWindow(w.Attempts, w.Window).Named(w.Scope)
		return ratekit.DeniedResponse(ratekit.Decision{Limit: limit, RetryAfter: d.RetryAfter, Blocked: true}, ratekit.CodeTooManyAttempts)
	}
	return nil
}

// window returns the window reported as scope.
func (lo *Lockout) window(scope string) Window {
	for _, w := range lo.policy.Windows {
		if w.Scope == scope {
			return w
		}
	}
	return lo.policy.Windows[0]
}
