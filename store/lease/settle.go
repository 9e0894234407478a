package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// errNotSettler is the error of a settling call when the inner store
// cannot settle.
var errNotSettler = errors.New("ratekit: lease: the inner store cannot settle charges or hold in-flight slots (it is not a store.Settler); " +
	"wrap one that can (store/memstore, the Redis stores), or give InFlight limits, WithSettle and WithCountIf a Limiter on a store that can")

// Reserve implements store.Settler for a call that names none of the
// leased limits: the inner store reserves it, and settles and renews it
// (Settle, Renew). A call that names a leased limit is an error, and
// reaches no store: a charge spent from a lease was debited from the
// shared window in a batch, so the inner store holds no charge of this
// call to settle, and a leased limit cannot be charged in one atomic call
// with the call's InFlight limits. Every call is an error when the inner
// store is no store.Settler. CheckSettle reports both cases, and
// ratekit.New and Middleware refuse such a Limiter when it is built.
func (s *Store) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	st, err := s.settler(limits)
	if err != nil {
		return ratekit.Decision{}, err
	}
	return st.Reserve(ctx, key, limits, cost)
}

// Settle implements store.Settler in the inner store, for a call that
// names none of the leased limits (see Reserve).
func (s *Store) Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	st, err := s.settler(limits)
	if err != nil {
		return err
	}
	return st.Settle(ctx, key, limits, r, cost)
}

// Renew implements store.Settler in the inner store, for a call that
// names none of the leased limits (see Reserve).
func (s *Store) Renew(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error) {
	st, err := s.settler(limits)
	if err != nil {
		return false, err
	}
	return st.Renew(ctx, key, limits, r)
}

// CheckSettle implements store.SettleChecker: it reports limits that name
// a leased limit, and an inner store that cannot settle (or that reports
// limits itself), with the error Reserve would return.
func (s *Store) CheckSettle(limits []ratekit.Limit) error {
	if _, err := s.settler(limits); err != nil {
		return err
	}
	return store.CheckSettle(s.inner, limits, errNotSettler)
}

// settler returns the inner store to settle a call with limits in, or why
// there is none.
func (s *Store) settler(limits []ratekit.Limit) (store.Settler, error) {
	st, ok := s.inner.(store.Settler)
	if !ok {
		return nil, errNotSettler
	}
	if i := s.shared(limits); i >= 0 {
		return nil, fmt.Errorf("ratekit: lease: limit %q is leased: its charges are spent in process from units debited in batches, "+
			"which the inner store cannot settle, nor take in one atomic call with an InFlight limit; "+
			"give InFlight limits, and Middleware's WithSettle and WithCountIf, a Limiter of their own whose limits are not leased "+
			"(on this store, which passes them to the inner store)", limits[i].Name())
	}
	return st, nil
}

var (
	_ store.Settler       = (*Store)(nil)
	_ store.SettleChecker = (*Store)(nil)
)
