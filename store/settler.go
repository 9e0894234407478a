package store

import (
	"context"

	"github.com/ratekit/ratekit"
)

// A Settler is a prepared set of limits (ratekit.Prepared) that can settle
// a charge after the fact and hold InFlight slots: what
// ratekit.Limiter.Reserve, ratekit.Reservation and InFlight limits need.
// The prepared forms of store/memstore and the Redis stores implement it,
// and the kit's wrappers' when what they wrap does; ratekit.New refuses
// InFlight limits on a store chain whose prepared form does not.
type Settler interface {
	ratekit.Prepared
	// Reserve is Take that, when it admits a call, records what it charged
	// in Decision.Receipt (a call of cost 0 too, which charges nothing but
	// may be settled upward), and takes one lease in each InFlight limit
	// whatever the cost (Receipt.Lease), which expires one lease from now.
	Reserve(ctx context.Context, key string, cost int64) (ratekit.Decision, error)
	// Settle moves the charge r records, for the same key, to cost,
	// atomically, and releases r's lease in every InFlight limit. A refund
	// gives back in each limit at most what r records it holds (Held) and
	// its state still has, never another call's charge nor a block; an extra
	// charge goes past the quota if need be (docs/architecture.md, "The
	// settle program", has the rules). It updates r to record the charge as
	// it stands (Cost, Ends and Held).
	Settle(ctx context.Context, key string, r *ratekit.Receipt, cost int64) error
	// Renew extends r's lease in every InFlight limit to one lease from now
	// and reports whether every one still held it (a lease that lapsed is
	// not taken again).
	Renew(ctx context.Context, key string, r *ratekit.Receipt) (bool, error)
}

// NonBlocking is implemented by a ratekit.Store whose calls never wait on
// I/O, timers or other processes, only briefly for locks, as store/memstore's:
// ratekit.Middleware and the adapters call a store that reports true without
// a timeout context (WithTimeout), whose timer could never fire. A store that
// wraps another reports true only when every call it makes is non-blocking.
type NonBlocking interface {
	ratekit.Store
	// NonBlocking reports whether the store's calls never block.
	NonBlocking() bool
}
