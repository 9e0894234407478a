// Package lease takes the quota of a hot limit from the shared store in
// leases and spends it in process: a ratekit.Store that wraps the store the
// instances share (the Redis store, typically) and, for the limits it is
// given, debits a batch of units from the shared window in one atomic call
// and admits requests from it locally until it is spent or the window ends.
// A limit all traffic shares is one subject on one Redis shard; with leases a
// busy instance asks about it once per refill interval, not once per request.
//
//	rs, _ := redisstore.New(client)
//	global := ratekit.FixedWindow(1_000_000, time.Minute).Named("global")
//	ls, err := lease.New(rs, []ratekit.Limit{global})
//	l, err := ratekit.New(ls, global)
//
// Units are debited by the store's atomic Take and spent only before their
// window ends, so all instances together admit at most the quota per window.
// The price is bounded: an instance holds at most MaxLease units of a subject
// (WithMaxLease; by default 1% of the smallest quota), so a window loses at
// most instances × MaxLease, and once a request of cost 1 was refused in it,
// at most (instances − 1) × MaxLease. Headers report the shared remaining
// last seen plus the units held. Unspent units lapse with their window.
//
// New accepts FixedWindow limits without a penalty block and says why it
// refuses others. Calls with other limits go to the inner store, and settle
// there; a Limiter that would settle a leased limit, or hold InFlight slots
// beside one, is refused when it is built. See
// docs/architecture.md#leased-quota-storelease and
// docs/operations.md#hot-limits-leased-quota in the repository.
package lease
