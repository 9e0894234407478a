package ratekit

import (
	"context"
	"fmt"
)

// A Limiter applies a fixed set of limits to subjects through a Store. It is
// safe for concurrent use; build it once with New and share it.
type Limiter struct {
	store  Store
	limits []Limit
	policy string // RateLimit-Policy header value, computed once
}

// New returns a Limiter enforcing limits through store. It validates every
// limit (see Limit.Validate) and rejects limits that share a name, so a
// misconfiguration is reported here, not at request time.
func New(store Store, limits ...Limit) (*Limiter, error) {
	if store == nil {
		return nil, ErrNilStore
	}
	if len(limits) == 0 {
		return nil, ErrNoLimits
	}
	seen := make(map[string]bool, len(limits))
	for _, l := range limits {
		if err := l.Validate(); err != nil {
			return nil, err
		}
		if seen[l.name] {
			return nil, &LimitError{Limit: l.name, Field: "name", Reason: "is used by two limits of one Limiter; name them apart with Named"}
		}
		seen[l.name] = true
	}
	limits = append([]Limit(nil), limits...)
	return &Limiter{store: store, limits: limits, policy: policyHeader(limits)}, nil
}

// Limits returns a copy of the Limiter's limits.
func (l *Limiter) Limits() []Limit { return append([]Limit(nil), l.limits...) }

// Allow is AllowN(ctx, key, 1).
func (l *Limiter) Allow(ctx context.Context, key string) (Decision, error) {
	return l.AllowN(ctx, key, 1)
}

// AllowN charges cost to key if every limit admits it. A cost of 0 only
// checks. An invalid cost or an empty key is an error and reaches no store.
func (l *Limiter) AllowN(ctx context.Context, key string, cost int64) (Decision, error) {
	if err := ValidateCost(cost); err != nil {
		return Decision{}, err
	}
	if key == "" {
		return Decision{}, ErrEmptyKey
	}
	d, err := l.store.Take(ctx, key, l.limits, cost)
	if err != nil {
		return Decision{}, fmt.Errorf("ratekit: take: %w", err)
	}
	d.policy = l.policy
	return d, nil
}

// Peek reports whether one more request for key would pass, without charging.
func (l *Limiter) Peek(ctx context.Context, key string) (Decision, error) {
	if key == "" {
		return Decision{}, ErrEmptyKey
	}
	d, err := l.store.Peek(ctx, key, l.limits)
	if err != nil {
		return Decision{}, fmt.Errorf("ratekit: peek: %w", err)
	}
	d.policy = l.policy
	return d, nil
}

// Reset forgets key's state for every limit of the Limiter.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if key == "" {
		return ErrEmptyKey
	}
	if err := l.store.Reset(ctx, key, l.limits); err != nil {
		return fmt.Errorf("ratekit: reset: %w", err)
	}
	return nil
}
