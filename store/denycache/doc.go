// Package denycache is a local deny cache: a ratekit.Store that wraps
// another (the Redis store, typically) and answers a denied subject
// in-process until its Retry-After, without a store call. Under attack most
// requests are denials of a few subjects; each instance then asks Redis
// about such a subject about once per Retry-After instead of once per
// request.
//
//	rs, _ := redisstore.New(client)
//	l, err := ratekit.New(denycache.New(rs), limits...)
//
// # What it promises
//
//   - It never admits what the store would deny: admissions always come
//     from the store. The cache only repeats denials.
//   - It never denies past the moment the store would admit. A denial is
//     kept until the local monotonic time read before the store call plus
//     its RetryAfter, less a margin for the store's clock resolution
//     (WithMargin, 1 ms): the store decided after that reading, and
//     nothing another caller does can make a denied request pass sooner,
//     since denied requests are not recorded and admissions only consume.
//   - A cached answer is the store's Decision with RetryAfter and ResetAfter
//     (the binding limit's and every limit's in States) reduced by the time
//     since the store was asked, Remaining as recorded, and Cached set; so
//     headers, bodies and observers stay truthful (observe.Event.Cached).
//
// The exceptions: a refund (Reservation.Settle to a lower cost, WithCountIf)
// made through another instance can let a denied request pass sooner, and
// an extra charge settled through this instance does not lower the
// Remaining of its cached denials; and a Reset made through another
// instance, or directly in Redis, is not seen here; this instance keeps denying the subject until
// the cached Retry-After at most. A Reset through this Store drops the
// subject's entries for those limits before and after resetting the inner
// store, and a denial the inner store returns across the Reset is not
// cached. The promises also assume that the store's clock runs at the rate
// of the local one: a store clock stepped forward admits earlier than its
// Retry-After said, for this cache as for any client that honoured it.
//
// # What it caches
//
// An entry is keyed by the subject and the identity of the call's limit
// set: the Spec().ID of every limit, in order. An ID fingerprints the
// limit's parameters, so a changed limit is never answered from an old
// entry. A Store tells up to 1024 limit sets apart, made when they are
// prepared (a Limiter prepares one, or three with shadow limits); calls with
// further sets go to the store
// uncached. Cached are denials by Take (and by Peek, as a Take of cost 1)
// that carry a RetryAfter above the margin, from the kit's deterministic
// algorithms: FixedWindow, SlidingWindow, SlidingLog, TokenBucket,
// LeakyBucket and GCRA. Not cached: admissions; Unsatisfiable denials (the
// cost exceeds a capacity: a caller's mistake rather than an attack, whose
// answer says "never", and whose other limits' numbers only the store
// knows); Suppressed limits (they decline by chance and count declined
// calls); custom algorithms; Decisions made by a fallback store; store
// errors.
//
// A cached denial of cost c answers requests of cost c or more (every
// algorithm's wait grows with the cost; the Retry-After reported to a
// larger cost is then a lower bound), up to the set's smallest quota (a
// larger cost is unsatisfiable: the store says so). A smaller cost goes to
// the store, as it might pass sooner, unless the denial was a block
// (Decision.Blocked), which denies every cost until it ends. With limits
// that have a penalty block (Limit.Block), a denial is cached only while
// every such limit is in its block: otherwise a request answered here
// instead of by the store could have started a block.
//
// # Cost
//
// A cached answer costs one shard's read lock (of 64, by subject), a clock
// reading and the hashing of the limits' IDs; it allocates only the States
// of its Decision (one slice), which must be a copy: its times are the
// caller's and the caller may change it. Memory is bounded by
// WithMaxEntries (DefaultMaxEntries, about 160 bytes each); expired entries
// are dropped by calls that find them, by a sweep of one shard that a call
// makes every 1/64 s of the cache's clock, before a full cache refuses an
// entry, and by Sweep. New starts no goroutine, and there is nothing to
// close.
//
// # Why it is not on by default
//
// The cache is a wrapper the user chooses, not a default of the Redis store:
// it trades the cross-instance Reset (an unlock by a support tool or another
// instance takes effect here only at the Retry-After) and up to
// WithMaxEntries of memory per instance for store calls: under a flood from
// one subject, every instance asks the store about once per Retry-After.
// Against real Redis, one subject denied to 64 goroutines went from one
// Redis call per decision to a few per million, and from tens of thousands
// to millions of decisions per second (docs/operations.md, "A local deny
// cache"). A service whose limits are reset by an operator, or whose
// denials are rare, gains little from it.
//
// Wrap only the store given to ratekit.New (and to packages that take a
// ratekit.Store, such as plans, levels or lockout); reputations take the
// inner store, which implements their interface.
package denycache
