// Package lease takes the quota of a hot limit from the shared store in
// leases and spends it in process: a ratekit.Store that wraps the store the
// instances share (the Redis store, typically) and, for the limits it is
// given, debits a batch of units from the shared window in one atomic call
// and admits requests from it locally until it is spent or the window ends.
// Every decision about one subject runs on the one Redis shard that holds
// its keys; for a limit that all traffic shares (levels' global limit, one
// large tenant, one API key used by a fleet) that shard caps the decisions
// per second however large the cluster, and each decision is a round trip.
// With leases a busy instance asks Redis about once per refill interval.
//
//	rs, _ := redisstore.New(client)
//	global := ratekit.FixedWindow(1_000_000, time.Minute).Named("global")
//	ls, err := lease.New(rs, []ratekit.Limit{global})
//	l, err := ratekit.New(ls, global)
//
// The idea is Doorman's (Google's distributed quota service, which hands
// out leases of capacity that clients spend locally) and bucket4j's
// batching proxy; ratekit's leases are debits of the shared limit itself,
// so they need no server of their own and no new operation in the store.
//
// # What it promises
//
//   - No over-admission. A unit is admitted only after it was debited
//     from the shared window by the store's own atomic Take (all or
//     nothing, as for any request), and only before that window ends: a
//     lease is spent until the instant the call began plus the window's
//     ResetAfter, less a margin for the store's millisecond clock
//     (WithMargin). Units never cross into the next window, and the shared
//     counter never passes the quota, so all instances together admit at
//     most the quota per window, on standalone Redis and on a cluster
//     alike (one subject's keys are on one shard either way).
//   - Bounded under-admission. The price is units one instance holds that
//     another could have used. A lease holds at most MaxLease units
//     (WithMaxLease; by default 1% of the smallest quota), and an instance
//     holds at most one lease per subject, so the units a window loses are
//     at most the units held when it ends: instances × MaxLease. In a
//     window where some instance refused a request of cost 1, the shared
//     window had nothing left, that instance held nothing, and the window
//     admitted at least quota − (instances − 1) × MaxLease.
//   - Small leases for quiet instances. Each lease is sized from the rate
//     at which the instance spent its previous one: enough for the refill
//     interval at that rate (WithRefillInterval, 100 ms), or for the time
//     left in the window when less, from 1 to MaxLease units. An instance's
//     first lease is 1 unit; one that serves a request now and then leases
//     1 unit at a time, which is a plain store call.
//   - Honest headers. Each limit of a leased decision reports as Remaining
//     the shared Remaining returned by this instance's last debit plus the
//     units it still holds: exactly the quota less what was admitted while
//     one instance leases, and otherwise off by what other instances
//     debited since (an overstatement) or hold (an understatement, at most
//     (instances − 1) × MaxLease). ResetAfter is the time to the end of the
//     shared window as the last debit reported it. A refusal is answered
//     locally when the units held and the shared Remaining last reported
//     cannot cover the cost: the shared Remaining never rises within a
//     window (debits only consume; nothing is refunded), so that refusal
//     is the store's, and its RetryAfter is the time to the window's end,
//     when the store would admit again.
//
// # Which limits
//
// New accepts FixedWindow limits without a penalty block, and refuses the
// others with an error that says why. A fixed window's quota belongs to a
// window with an end every instance can read from its Decision, so a unit
// debited in it can be spent at any instant before that end without
// changing what the window admits. A sliding window, a sliding log, a GCRA
// or a token or leaky bucket limits the requests in every interval, not in
// a window with an end: a unit debited at t and spent at t + d was counted
// at t, so a lease spent later lets bursts through that the algorithm
// refuses (with a burst of 10 a second, ten units leased at 0 s and spent
// at 0.99 s, then ten more at 1 s, admit 20 within 10 ms). Keeping them
// exact would take shrinking their burst by rate × lease time, which
// changes the limit's identity and headers. A penalty block is started by
// a denial, and a refused debit of a whole lease is no request's denial.
//
// Calls whose limits are not the leased ones, in order (a Limiter built
// with the same limits makes such calls), go to the inner store as they
// are, and so do calls of cost 0 (a check) or above the smallest quota,
// and calls about more subjects than WithMaxSubjects.
//
// # InFlight limits and settled charges
//
// A Store is a store.Settler (Reserve, Settle, Renew) for the calls that
// name none of its leased limits: the inner store reserves, settles and
// renews them. So a second Limiter on the same Store can hold InFlight
// limits, or serve Middleware's WithSettle and WithCountIf, beside the
// Limiter of the leased limits:
//
//	rate, err := ratekit.New(ls, global)                     // leased
//	slots, err := ratekit.New(ls, ratekit.InFlight(100))     // held in rs
//	h := ratekit.Middleware(rate, key)(ratekit.Middleware(slots, key)(next))
//
// A call that names a leased limit (or a limit of the same name and
// parameters, which shares its state) is refused, when the Limiter is
// built: ratekit.New refuses a Limiter with a leased limit and an InFlight
// one, and Middleware (ratekit.NewGuard) panics for WithSettle or
// WithCountIf on a Limiter with a leased limit: the prepared form of a set
// that names a leased limit is no store.Settler. No
// other answer keeps the promises. A charge spent from a lease was debited
// from the shared window before the call, in a batch with other calls'
// units, so the inner store holds no charge of the call to settle.
// Refunding it into the shared window (or passing the whole call to the
// inner store, whose refund does the same) would make the window's
// Remaining rise, which every instance's local refusals assume it never
// does within a window. Taking the leased units and the InFlight slot in
// two steps would break all or nothing across the call's limits. And an
// error found only at request time would go to the error policy, which
// fails open by default: the limit would be silently off.
//
// Over an inner store that is no store.Settler, Reserve, Settle and Renew
// return an error, and ratekit.New and Middleware refuse a Limiter that
// needs them, as they do for a wrapping deny cache or fallback store.
//
// # Faults
//
//   - An instance that dies holding a lease loses its units for the rest
//     of their window, at most MaxLease units per subject; the next window
//     starts afresh for everyone.
//   - A store error during a debit is returned as the inner store's error
//     (the Limiter's error policy decides); units already held are still
//     spent, and refusals known from the last answer are still made
//     locally. A fallback store (store/fallback) that answers locally is
//     not leased from: that call is its answer (asked again at the call's
//     own cost when it refused a larger debit; completed from the units
//     held when it admitted a smaller one), and the next ones go to it at
//     their own cost until its primary answers again.
//   - Reset drops this instance's lease of the subject before and after
//     resetting the inner store. A Reset through another instance, or in
//     Redis directly, is not seen here: this instance spends what it holds
//     (at most MaxLease) until the window ends, and refuses locally on the
//     shared Remaining it last saw until then.
//   - A lease waits for no timer and starts no goroutine; one call per
//     subject at a time asks the inner store for a lease, and the others
//     wait for it within their own context.
//
// # Returned units
//
// Unspent units are never given back: the Store interface has no refund,
// and a refund in a fixed window is right only within the same window.
// Units held at the end of a window lapse with it, and units a Reset
// discards are dropped; Stats counts both, with the leases and units
// taken and the units held now.
//
// Wrap only the store given to ratekit.New for the hot limits (and to
// packages that take a ratekit.Store, such as levels); reputations take
// the inner store.
package lease
