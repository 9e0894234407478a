package fallback

import (
	"context"
	"errors"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// errNotSettler is the error of a settling call when a store cannot settle.
var errNotSettler = errors.New("ratekit: fallback: a store cannot settle charges or hold in-flight slots (it is not a store.Settler); " +
	"give the fallback a primary and a local store that can (the Redis stores, store/memstore)")

// Reserve implements store.Settler: Take that records the charge, in the
// store that made it (a receipt from the local store has Fallback set).
func (s *Store) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, cost, opReserve)
}

// Settle implements store.Settler in the store that made the charge: the
// local store for a receipt with Fallback set (with the scaled limits),
// else the primary, whatever the breaker's state. A settle the primary
// cannot take returns its error: the charge stands as reserved, and a lease
// lapses at the end of its term.
func (s *Store) Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	st, limits, err := s.settler(r, limits)
	if err != nil {
		return err
	}
	return st.Settle(ctx, key, limits, r, cost)
}

// Renew implements store.Settler in the store that made the charge, as
// Settle does.
func (s *Store) Renew(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error) {
	st, limits, err := s.settler(r, limits)
	if err != nil {
		return false, err
	}
	return st.Renew(ctx, key, limits, r)
}

// settler returns the store that made r's charge and the limits it made it
// with.
func (s *Store) settler(r *ratekit.Receipt, limits []ratekit.Limit) (store.Settler, []ratekit.Limit, error) {
	st, scaled := s.primary, false
	if r != nil && r.Fallback {
		st, scaled = s.local, true
	}
	se, ok := st.(store.Settler)
	if !ok {
		return nil, nil, errNotSettler
	}
	if scaled {
		limits = s.scaled.limits(limits)
	}
	return se, limits, nil
}

// CheckSettle implements store.SettleChecker: an error when the primary
// or the local store cannot settle, else what they report for limits (the
// local store for the scaled limits), so that ratekit.New and Middleware
// refuse a Limiter whose charges either could not settle.
func (s *Store) CheckSettle(limits []ratekit.Limit) error {
	if err := store.CheckSettle(s.primary, limits, errNotSettler); err != nil {
		return err
	}
	return store.CheckSettle(s.local, s.scaled.limits(limits), errNotSettler)
}

var (
	_ store.Settler       = (*Store)(nil)
	_ store.SettleChecker = (*Store)(nil)
)
