// Package denycache is a local deny cache: a ratekit.Store that wraps another
// (the Redis store, typically) and answers a denied subject in-process until
// its Retry-After, without a store call. Under attack most requests are
// denials of a few subjects; each instance then asks the store about such a
// subject about once per Retry-After instead of once per request.
//
//	rs, _ := redisstore.New(client)
//	l, err := ratekit.New(denycache.New(rs), limits...)
//
// It never admits what the store would deny, and never denies past the moment
// the store would admit: a denial is kept until the local time read before
// the store call plus its RetryAfter, less WithMargin, and answered as the
// store's Decision, counted down, with Cached set. The exception: a Reset or
// a refund through another instance, or in Redis, is seen here only when the
// cached Retry-After ends. Only denials of the deterministic algorithms are
// cached, not Unsatisfiable ones. Wrap only the store given to ratekit.New;
// reputations take the inner store. See
// docs/architecture.md#local-deny-cache-storedenycache in the repository.
package denycache
