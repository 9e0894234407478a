// Package fallback is a ratekit.Store that keeps deciding while the shared
// store (Redis) is down: it asks a primary store and, when the primary fails,
// decides in a local one (memstore) with each limit scaled to one instance's
// share, behind a circuit breaker that stops asking the primary until a
// background probe finds it back.
//
// A fallback is a choice against the middleware's default error policy. By
// default a store failure lets the request through unlimited (fail open);
// FailClosed refuses it with a 503. A fallback does neither: every request is
// still limited, approximately, and none fails because of the store. Choose
// it where an outage of Redis must neither lift the limits (login, costly
// endpoints, abuse protection) nor take the service down.
//
// # How it decides
//
// While the breaker is closed, every call goes to the primary. A call the
// primary answers is its answer. A call it fails (an error, or its context
// ran out) is answered by the local store in the same call, so no request
// fails, and is counted; Config.Failures consecutive failures open the
// breaker. Errors of the request itself (ratekit.ErrEmptyKey,
// ratekit.ErrInvalidCost, ratekit.ErrInvalidLimit) and the caller's own
// cancellation are returned unchanged and not counted.
//
// While the breaker is open, every call goes straight to the local store:
// nothing waits for the primary. At most once per Config.Retry, one call
// starts a probe in the background (never more than one at a time): a Peek
// of that call's key and limits on the primary, bounded by
// Config.ProbeTimeout, which changes no state. A probe that succeeds closes
// the breaker, and the calls that follow go to the primary again: within
// Retry and a round trip of the primary's return (measured on Redis: 11 to
// 160 ms after a restart or a thaw). A go-redis pool that has given up
// dialing (after PoolSize failed dials in a row: about half a minute of
// outage with redisstore.ClientOptions and the default Retry) dials only
// once a second, which adds up to a second (measured: 1.0 to 1.2 s).
//
// Decisions of the local store have Decision.Fallback set, which observers
// (ratekit.WithObserver) see as Event.Fallback. The local store is called
// with the caller's context stripped of its deadline and cancellation
// (context.WithoutCancel), so a call whose deadline the primary used up is
// still decided.
//
// # Per-instance limits
//
// Config.Instances says how many instances of the service share the
// primary's limits. While falling back, each instance enforces its share, as
// rate-limiter-flexible's insurance limiter is configured (an in-memory
// limiter with the points divided by the number of processes): quotas,
// bursts and capacities divided by Instances, rounded down but at least 1,
// and rates divided by Instances; windows, precision, penalty blocks and a
// LeakyBucket's maximum wait are kept, and so are names. The local decisions
// carry these scaled limits, so X-RateLimit-Limit and the per-limit numbers
// of the RateLimit header show the per-instance quota. Custom algorithms
// (ratekit.Custom) are passed unchanged: the local store must run them
// (memstore does not, so such calls fail while falling back and the error
// policy decides). A bucket so slow that its share would need more than
// the longest horizon a limit may have (366 days) is passed unchanged too.
//
// # What is lost while falling back
//
//   - The primary's state is not seen locally: a subject blocked in Redis, or
//     one that has used up its quota there, starts afresh in the local store
//     (with its per-instance share). For a login limit, an attacker gains at
//     most one share per instance per window during an outage.
//   - Per-instance quotas are approximations. They assume requests spread
//     evenly over Instances instances: a subject whose requests all reach
//     one instance gets only its share, one spread over more instances than
//     Instances gets more than the quota; the "at least 1" floor lets each
//     instance admit one when a quota is below Instances.
//   - When the primary returns, its counters resume where they were (those
//     whose TTL has not run out); what was admitted locally is not charged
//     to it. Within a window that spans an outage a subject can therefore
//     get its quota plus its local shares.
//   - Until Failures consecutive calls have failed, each call pays the
//     primary's failure first: for a hung Redis, the middleware's timeout.
//   - One breaker serves every subject: on a Redis Cluster with one master
//     down, the calls for its slots fail (and are decided locally) while the
//     others succeed and keep the breaker closed, or, once it opens, every
//     subject is decided locally until a probe (on whatever subject comes
//     next) succeeds.
//
// A Store implements ratekit.Store and store.Settler, so a lockout may run
// over it too: while the primary fails, it then counts attempts per instance
// at the scaled limits instead of failing closed. Reputations
// (reputation.Store) keep their own error policies.
package fallback
