package ratekit

import "context"

// A Store keeps limit state and decides. Implementations must be safe for
// concurrent use and atomic per call: all limits of one call are checked and
// then either all are charged or none is. A denied request is not recorded.
//
// The key is a non-empty subject (an IP, an account); the store derives its
// storage keys from the subject and each limit's ID. Stores return per-limit
// states folded with Combine, so that all stores choose the binding limit
// alike. store/storetest checks the contract.
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

// CheckDistinct reports an error if there are no limits, or if two share an
// ID, which would make a store charge one key twice. New rejects such limits
// already; stores call CheckDistinct for callers that build their own lists.
func CheckDistinct(limits []Limit) error {
	if len(limits) == 0 {
		return ErrNoLimits
	}
	for i := range limits {
		for j := i + 1; j < len(limits); j++ {
			if limits[i].id == limits[j].id {
				return &LimitError{Limit: limits[i].name, Field: "name", Reason: "is used by two limits of one call"}
			}
		}
	}
	return nil
}
