package ratekit

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// A LockoutWindow is one window of a Lockout: Attempts attempts are allowed
// per Window; the next one starts a block of Block, reported as Scope.
//
// Threshold: Attempts N lets attempts 1..N through and blocks the N+1-th.
// (A ">= threshold" limiter with threshold T, as in some designs, blocks the
// T-th attempt: that is Attempts T-1 here.)
type LockoutWindow struct {
	Scope    string // reported when this window trips, e.g. "temp" or "long"
	Attempts int64
	Window   time.Duration
	Block    time.Duration
}

// LockoutConfig configures a Lockout.
type LockoutConfig struct {
	// Name separates lockouts in the store, e.g. "login" or "verify";
	// 1 to 48 characters from [A-Za-z0-9_.-].
	Name string
	// Windows are checked together; each has its own block.
	Windows []LockoutWindow
	// ExtendBlock records attempts made during a block and restarts the
	// block with each. By default they are neither recorded nor extend it.
	ExtendBlock bool
	// FailOpen lets attempts through when the store fails. By default a
	// lockout fails closed: Enforce and Middleware answer 503.
	FailOpen bool
}

// A LockoutDecision is the answer of a Lockout.
type LockoutDecision struct {
	// Allowed reports whether the attempt may proceed.
	Allowed bool
	// Scope names the window whose block denies ("" when allowed).
	Scope string
	// Limit is that window's Attempts.
	Limit int64
	// RetryAfter is the time left on the block; the block key's TTL is the
	// truth.
	RetryAfter time.Duration
	// Counts holds the attempts counted in each window, in config order.
	Counts []int64
	// Attempt identifies the attempt this call recorded ("" when none), for
	// Refund.
	Attempt string
}

// LockoutOp is what a LockoutStore is asked to do.
type LockoutOp uint8

// Lockout operations.
const (
	// LockoutCheck reports whether the subject is blocked, recording nothing.
	LockoutCheck LockoutOp = iota
	// LockoutAttempt records an attempt (after checking the block) and
	// starts the block of every window it takes past its Attempts.
	LockoutAttempt
	// LockoutReset forgets the subject's attempts and blocks.
	LockoutReset
	// LockoutRefund removes one recorded attempt (LockoutDecision.Attempt).
	LockoutRefund
)

// A LockoutStore runs lockout operations atomically. Both stores of the kit
// implement it.
type LockoutStore interface {
	// Lockout runs op for key under p; attempt is the attempt to remove
	// for LockoutRefund, "" otherwise.
	Lockout(ctx context.Context, key string, p *LockoutPolicy, op LockoutOp, attempt string) (LockoutDecision, error)
}

// LockoutPolicy is a validated LockoutConfig, as stores receive it.
type LockoutPolicy struct {
	LockoutConfig
	id string // name:fingerprint, the storage identity
}

// ID returns the policy's storage identity, name:fingerprint.
func (p *LockoutPolicy) ID() string { return p.id }

// Longest returns the longest window.
func (p *LockoutPolicy) Longest() time.Duration {
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
// say. Safe for concurrent use.
type Lockout struct {
	store  LockoutStore
	policy *LockoutPolicy
}

// NewLockout validates cfg and returns a Lockout over store.
func NewLockout(store LockoutStore, cfg LockoutConfig) (*Lockout, error) {
	if store == nil {
		return nil, ErrNilStore
	}
	if why := validateName(cfg.Name); why != "" {
		return nil, &LimitError{Limit: cfg.Name, Field: "name", Reason: why}
	}
	if len(cfg.Windows) == 0 {
		return nil, &LimitError{Limit: cfg.Name, Field: "windows", Reason: "are missing"}
	}
	h := fnv.New64a()
	for _, w := range cfg.Windows {
		l := FixedWindow(w.Attempts, w.Window).Block(w.Block).Named(cfg.Name)
		if err := l.Validate(); err != nil {
			return nil, err
		}
		if w.Block <= 0 {
			return nil, &LimitError{Limit: cfg.Name, Field: "block", Reason: "must be set for every window"}
		}
		if w.Attempts > MaxLogQuota {
			return nil, &LimitError{Limit: cfg.Name, Field: "attempts", Reason: fmt.Sprintf("must be at most %d", MaxLogQuota)}
		}
		fmt.Fprintf(h, "%d|%d|%d|%t;", w.Attempts, w.Window, w.Block, cfg.ExtendBlock)
	}
	cfg.Windows = append([]LockoutWindow(nil), cfg.Windows...)
	p := &LockoutPolicy{LockoutConfig: cfg, id: fmt.Sprintf("%s:%016x", cfg.Name, h.Sum64())}
	return &Lockout{store: store, policy: p}, nil
}

// Attempt records an attempt for key and reports whether it may proceed:
// denied while a block lasts, and denied (starting a block) when it takes a
// window past its Attempts. Checking and recording are one atomic step, so
// parallel attempts cannot slip past the allowance: call Attempt before the
// attempt is tried (the password or the code checked), then Reset on success.
// To count only failures, Refund the attempt when it did not fail; the
// failure-only Middleware does this.
func (lo *Lockout) Attempt(ctx context.Context, key string) (LockoutDecision, error) {
	return lo.do(ctx, key, LockoutAttempt, "")
}

// Check reports whether key is blocked, recording nothing. A Check followed
// by a later record would let parallel attempts through: use it to inform,
// and Attempt to decide.
func (lo *Lockout) Check(ctx context.Context, key string) (LockoutDecision, error) {
	return lo.do(ctx, key, LockoutCheck, "")
}

// Refund removes the attempt that Attempt recorded (its decision's Attempt),
// for an attempt that turned out not to count.
func (lo *Lockout) Refund(ctx context.Context, key, attempt string) error {
	if attempt == "" {
		return nil
	}
	_, err := lo.do(ctx, key, LockoutRefund, attempt)
	return err
}

// Reset forgets key's attempts and blocks, e.g. after a successful login.
func (lo *Lockout) Reset(ctx context.Context, key string) error {
	_, err := lo.do(ctx, key, LockoutReset, "")
	return err
}

func (lo *Lockout) do(ctx context.Context, key string, op LockoutOp, attempt string) (LockoutDecision, error) {
	if key == "" {
		return LockoutDecision{}, ErrEmptyKey
	}
	d, err := lo.store.Lockout(ctx, key, lo.policy, op, attempt)
	if err != nil {
		return LockoutDecision{}, fmt.Errorf("ratekit: lockout: %w", err)
	}
	return d, nil
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
// nil to go on: 429 TOO_MANY_ATTEMPTS when denied, 503 when the store failed
// (nil when FailOpen), 400 for an empty key.
func (lo *Lockout) Response(d LockoutDecision, err error) *ErrorResponse {
	switch {
	case errors.Is(err, ErrEmptyKey):
		return BadRequestResponse()
	case err != nil && lo.policy.FailOpen:
		return nil
	case err != nil:
		return UnavailableResponse(time.Second)
	case !d.Allowed:
		return LockoutResponse(d)
	}
	return nil
}

// LockoutResponse returns the 429 TOO_MANY_ATTEMPTS body for a denied
// lockout decision: "Too many attempts. Try again in N seconds.", with
// context.retryAfter, the window's attempts as limit, and its scope as policy.
func LockoutResponse(d LockoutDecision) *ErrorResponse {
	return tooMany(CodeTooManyAttempts, d.RetryAfter, d.Limit, 0, d.Scope)
}
