package ratekit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratekit/ratekit/response"

	"github.com/ratekit/ratekit/internal/bounds"
)

// A Limiter applies a fixed set of limits to subjects through a Store: each
// call charges every limit, or none. Most callers want Middleware; Allow and
// AllowN decide in code. A Limiter is safe for concurrent use; build it once
// with New and share it. The zero Limiter is not usable.
type Limiter struct {
	policy string // RateLimit-Policy header value, computed once
	names  string // every limit's name, comma-separated, for observers
	// lease is the shortest lease of the InFlight limits, 0 when none: a
	// Reservation renews its slots every quarter of it.
	lease time.Duration
	held  string // the InFlight limits' names, comma-separated, for observers
	// gate counts this instance's in-flight requests per subject (see
	// Reserve); nil without InFlight limits.
	gate *gate

	// the limits prepared by the store: every limit (for Reset), the
	// enforced and the shadow ones (nil when there are none); settler is
	// the settling form of the first call's limits, nil when it cannot settle.
	all, enforcedP, shadowP Prepared
	settler                 settler
	unbounded               bool // the store never blocks (store.NonBlocking)
}

// New returns a Limiter enforcing limits through store. It checks every
// limit and reports every problem at once (as a joined error whose parts are
// *LimitError values, all matching ErrInvalidLimit), so a misconfiguration
// is found when the Limiter is built, never at request time. Limiters whose
// limits agree in name and parameters share counters (see Named).
//
// New hands the limits to the store once (Store.Prepare), which checks that
// it can serve them; for InFlight limits, New refuses a store chain whose
// prepared form cannot settle charges and hold slots (store.Settler).
func New(store Store, limits ...Limit) (*Limiter, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: the store is nil; pass memstore.New() or a Redis store", ErrInvalidLimit)
	}
	if len(limits) == 0 {
		return nil, fmt.Errorf("%w: no limits; pass at least one, e.g. ratekit.FixedWindow(100, time.Minute)", ErrInvalidLimit)
	}
	var errs []error
	seen := make(map[string]bool, len(limits))
	for _, l := range limits {
		if err := l.validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[l.Name()] {
			errs = append(errs, &LimitError{Limit: l.Name(), Field: "name", Reason: "is used by two limits of one Limiter; name them apart with Named"})
		}
		seen[l.Name()] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return newLimiter(store, limits)
}

// Allow is AllowN(ctx, key, 1).
func (l *Limiter) Allow(ctx context.Context, key string) (Decision, error) {
	return l.AllowN(ctx, key, 1)
}

// AllowN charges cost to key if every limit admits it. A cost of 0 only
// checks. An invalid cost or an empty key is an error and reaches no store.
// The context bounds the store call: give it a deadline (Middleware applies
// WithTimeout, 100 ms by default).
func (l *Limiter) AllowN(ctx context.Context, key string, cost int64) (Decision, error) {
	if err := bounds.CheckCost(cost); err != nil {
		return Decision{}, err
	}
	if key == "" {
		return Decision{}, ErrEmptyKey
	}
	if l.lease > 0 && cost > 0 {
		return Decision{}, errInFlightAllow
	}
	if l.shadowP == nil { // one store call, straight to the caller
		d, err := l.enforcedP.Take(ctx, key, cost)
		if err == nil {
			d.policy = l.policy
		}
		return d, err
	}
	return l.decide(ctx, key, cost, false)
}

// Peek reports whether one more request for key would pass, without charging.
func (l *Limiter) Peek(ctx context.Context, key string) (Decision, error) {
	if key == "" {
		return Decision{}, ErrEmptyKey
	}
	return l.decide(ctx, key, 1, true)
}

// Reset forgets key's state for every limit of the Limiter, blocks included.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if key == "" {
		return ErrEmptyKey
	}
	return l.all.Reset(ctx, key)
}

// Enforce is AllowN's one-call form for handlers: nil when the request may
// pass, else an *response.Error to write (its Write or ServeHTTP method): 429
// RATE_LIMITED with Retry-After, 400 for an empty key or a bad cost, 503 when
// the store fails (to fail open instead, let a SERVICE_UNAVAILABLE response
// pass).
func (l *Limiter) Enforce(ctx context.Context, key string, cost int64) error {
	d, err := l.AllowN(ctx, key, cost)
	switch {
	case err == nil && d.Allowed:
		return nil
	case err == nil:
		return DeniedResponse(d, response.CodeRateLimited)
	case isRequestError(err):
		return response.BadRequest()
	default:
		return response.Unavailable(time.Second)
	}
}
