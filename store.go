package ratekit

import "context"

// A Store keeps limit state and decides. Implementations must be safe for
// concurrent use and atomic per call: all limits of one call are checked and
// then either all are charged or none is. A denied request is not recorded.
//
// The key is a non-empty subject (an IP, an account); the store derives its
// storage keys from the subject and each limit's Spec().ID. Stores fold
// per-limit states with store.Combine, so that all stores choose the binding
// limit alike, and store/storetest checks the contract. The kit's stores are
// store/memstore (in-process) and the Redis store
// (github.com/ratekit/ratekit/store/redisstore, a module of its own).
type Store interface {
	// Take charges cost to every limit if all of them admit it. A cost of 0
	// checks without charging.
	Take(ctx context.Context, key string, limits []Limit, cost int64) (Decision, error)
	// Peek reports whether a request of cost 1 would pass, and the current
	// remaining quota, without changing state.
	Peek(ctx context.Context, key string, limits []Limit) (Decision, error)
	// Reset forgets the state of the limits for key.
	Reset(ctx context.Context, key string, limits []Limit) error
}
