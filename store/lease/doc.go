// Package lease takes the quota of a hot limit from the shared store in
// leases and spends it in process: a ratekit.Store that wraps the store the
// instances share (the Redis store, typically) and, for the limits it is
// given, debits a batch of units from the shared window in one atomic call
// and admits from it locally until it is spent or the window ends. A busy
// instance asks about a subject once per refill interval, not per request.
//
//	rs, _ := redisstore.New(client)
//	global := ratekit.FixedWindow(1_000_000, time.Minute).Named("global")
//	ls, err := lease.New(rs, []ratekit.Limit{global})
//	l, err := ratekit.New(ls, global)
//
// All instances together admit at most the quota per window; the price is
// the units each holds, at most MaxLease per subject, which lapse unspent
// with their window. New accepts FixedWindow and Calendar limits (aligned
// windows too) without a penalty block; calls with other limits go to the inner store, and a Limiter that
// would settle a leased limit is refused when it is built. See
// docs/architecture.md#leased-quota-storelease and
// docs/operations.md#hot-limits-leased-quota in the repository.
package lease
