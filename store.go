package ratekit

import "context"

// A Store keeps limit state and decides; it must be safe for concurrent
// use. New hands a Store its limits once, through Prepare, and every
// decision goes to the prepared form. The kit's stores are store/memstore
// and the Redis stores (store/redisstore, a module of its own);
// store/storetest checks the contract.
type Store interface {
	// Prepare checks limits as one call's set (valid, no two with one ID)
	// and returns what decides them for any subject. Its error matches
	// ErrInvalidLimit when a limit is one the store cannot serve.
	Prepare(limits []Limit) (Prepared, error)
}

// A Prepared decides one set of limits for any subject, atomically per
// call: all limits are checked and then either all are charged or none is.
// A denied request is not recorded. The key is a non-empty subject (an IP,
// an account); the store derives its storage keys from the subject and each
// limit's Spec().ID, and folds per-limit states with store.Combine. One that
// can also settle charges and hold in-flight slots is a store.Settler, which
// Limiter.Reserve, InFlight limits, WithSettle and WithCountIf need.
type Prepared interface {
	// Take charges cost to every limit if all of them admit it. A cost of 0
	// checks without charging.
	Take(ctx context.Context, key string, cost int64) (Decision, error)
	// Peek reports whether a request of cost 1 would pass, and the current
	// remaining quota, without changing state.
	Peek(ctx context.Context, key string) (Decision, error)
	// Reset forgets the state of the limits for key.
	Reset(ctx context.Context, key string) error
}

// A Receipt records what a store charged an admitted Reserve call, so that
// the charge can be settled after the fact and the call's in-flight slots
// released. Its fields are written by the store for itself: callers, such
// as a Reservation, only keep it. The zero Receipt records nothing.
type Receipt struct {
	// Cost is what the call charged.
	Cost int64
	// At is the store's clock at the charge, in microseconds.
	At int64
	// Ends holds, for each limit of the call in order, where the charge
	// sits in that limit's state, in microseconds on the store's clock (see
	// docs/architecture.md); 0 for a limit that holds none of it.
	Ends []int64
	// Held holds, for each limit of the call in order, how much of the
	// charge that limit holds at Ends: at most one quota.
	Held []int64
	// Lease names the call's in-flight slots; "" when it holds none.
	Lease string
	// Fallback reports a charge made by a fallback store (store/fallback),
	// which settles it there.
	Fallback bool
}

// settler is what Limiter.Reserve, Reservation and InFlight limits need of
// a Prepared; package store documents it as Settler.
type settler interface {
	Prepared
	Reserve(ctx context.Context, key string, cost int64) (Decision, error)
	Settle(ctx context.Context, key string, r *Receipt, cost int64) error
	Renew(ctx context.Context, key string, r *Receipt) (bool, error)
}
