package store

import (
	"context"
	"time"

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

// An Overrider is a ratekit.Store that holds overrides: numbers in force,
// for one subject, in place of a limit's own (ratekit.Limiter.Override).
// Its decisions about the subject must read them atomically with the
// decision and report the limit in force in the Decision (a copy of the
// prepared limit with the override's numbers, made with Limit.With), so
// that the next decision on any instance sharing the store sees a change.
// store/memstore and the Redis stores implement it, and store/denycache and
// store/fallback when the store they wrap does.
type Overrider interface {
	ratekit.Store
	// SetOverride puts l's numbers in force for subject (l's ID names the
	// limit), for expiry from now on the store's clock (0: until cleared).
	// Under carry.Reset it deletes the limit's state for subject, in the
	// same atomic step; so does an override's end, once a decision sees it.
	SetOverride(ctx context.Context, subject string, l ratekit.Limit, expiry time.Duration) error
	// ClearOverride ends subject's override of l, if any (carry.Reset:
	// with the state made under it).
	ClearOverride(ctx context.Context, subject string, l ratekit.Limit) error
	// ListOverrides calls f with each override in force of limits (limits
	// with their numbers, and the end, zero for none), for subject or, when
	// subject is "", every subject; by subject, then in the order of limits.
	ListOverrides(ctx context.Context, subject string, limits []ratekit.Limit, f func(subject string, l ratekit.Limit, expires time.Time)) error
}
