package store

import (
	"context"

	"github.com/ratekit/ratekit"
)

// A Settler is a Store that can settle a charge after the fact and hold
// InFlight slots: what ratekit.Limiter.Reserve, ratekit.Reservation and
// InFlight limits need. store/memstore, the Redis stores and the kit's
// wrappers implement it; ratekit.New refuses InFlight limits on a store
// that does not.
type Settler interface {
	ratekit.Store
	// Reserve is Take that, when it admits a call, records what it charged
	// in Decision.Receipt (a call of cost 0 too, which charges nothing but
	// may be settled upward), and takes one lease in each InFlight limit
	// whatever the cost (Receipt.Lease), which expires one lease from now.
	Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error)
	// Settle moves the charge r records, for the same key and limits, to
	// cost, atomically. Each limit holds at most one quota (a bucket's
	// burst) of a call's charge. A lower cost refunds, in each limit, only
	// what r records the limit holds (Held), as far as its state still has
	// it (nothing once a window has passed, after a bucket's refill, never
	// below zero, never a block), so a settlement never gives back another
	// call's charge; a higher one charges the extra past the quota if need
	// be. It releases r's lease in every InFlight limit. Suppressed and
	// custom algorithms are left as they are. It updates r to record the
	// charge as it stands (Cost, Ends and Held).
	Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error
	// Renew extends r's lease in every InFlight limit to one lease from now
	// and reports whether every one still held it (a lease that lapsed is
	// not taken again).
	Renew(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error)
}

// CheckSettle reports whether inner, the store a wrapper settles through,
// can settle calls with limits: notSettler when it is no Settler, else what
// its CheckSettle reports (nil when it has none). Wrapper stores build
// their SettleChecker on it.
func CheckSettle(inner ratekit.Store, limits []ratekit.Limit, notSettler error) error {
	st, ok := inner.(Settler)
	if !ok {
		return notSettler
	}
	if c, ok := st.(SettleChecker); ok {
		return c.CheckSettle(limits)
	}
	return nil
}

// A SettleChecker is a Settler that cannot settle the calls of every
// limit: a wrapper whose inner store is no Settler, or store/lease, whose
// leased limits are spent in process. ratekit.New refuses a Limiter with
// InFlight limits, and ratekit.NewGuard (Middleware, the adapters) panics
// for WithSettle and WithCountIf, when CheckSettle reports an error for
// the Limiter's limits: a call that could not be settled is found when the
// Limiter or the route is built, not at request time, where the error
// policy might let it pass unlimited. A wrapper of a store reports what
// the store it wraps reports.
type SettleChecker interface {
	Settler
	// CheckSettle reports why the store cannot Reserve, Settle and Renew
	// calls with limits (a Limiter's limits, in order), or nil when it can.
	// Its error is prefixed "ratekit: " and says how to fix the setup; the
	// store's Reserve, Settle and Renew return it for such calls.
	CheckSettle(limits []ratekit.Limit) error
}
