package denycache

import (
	"context"
	"errors"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

// errNotSettler is the error of a settling call when the inner store
// cannot settle.
var errNotSettler = errors.New("ratekit: denycache: the inner store cannot settle charges or hold in-flight slots (it is not a store.Settler); " +
	"wrap one that can (store/memstore, the Redis stores)")

// Reserve implements store.Settler: it answers a cached denial as Take
// does (a denial charges nothing, so it needs no receipt), and otherwise
// reserves in the inner store. Calls with an InFlight limit are never
// cached: a slot comes back when a request ends, which no cache can
// foresee.
func (s *Store) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, cost, opReserve)
}

// Settle implements store.Settler in the inner store. A refund drops the
// key's cached denials on this instance, so it answers from the store
// again at once; another instance's cache keeps its denial until that
// denial's Retry-After, as it was told (a refund there is not seen).
func (s *Store) Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	st, ok := s.inner.(store.Settler)
	if !ok {
		return errNotSettler
	}
	refund := r != nil && cost < r.Cost
	err := st.Settle(ctx, key, limits, r, cost)
	if refund && key != "" {
		sub := subject.Key(key)
		s.forget(s.shard(sub), sub, limits)
	}
	return err
}

// Renew implements store.Settler in the inner store.
func (s *Store) Renew(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error) {
	st, ok := s.inner.(store.Settler)
	if !ok {
		return false, errNotSettler
	}
	return st.Renew(ctx, key, limits, r)
}

// CheckSettle implements store.SettleChecker: an error when the inner
// store cannot settle, else what the inner store reports for limits, so
// that ratekit.New and Middleware refuse a Limiter whose charges the inner
// store could not settle.
func (s *Store) CheckSettle(limits []ratekit.Limit) error {
	return store.CheckSettle(s.inner, limits, errNotSettler)
}

var (
	_ store.Settler       = (*Store)(nil)
	_ store.SettleChecker = (*Store)(nil)
)
