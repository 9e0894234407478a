// Package memstore is the in-process ratekit.Store. It gives the same answers
// as the Redis stores (same algorithms, same integer microsecond arithmetic,
// same expiry) for a single process: use it for tests, for single-instance
// services, or as the local store of store/fallback.
//
// The limits of one call are decided atomically under the lock of their
// subject's shard; a call with one limit allocates nothing once its subject
// has state. Expired state is dropped by a background sweeper (Close stops
// it) and by Sweep. The store holds at most DefaultMaxEntries entries unless
// WithMaxEntries says otherwise; at the bound a new subject takes the place
// of state that admits, never of a denial, and is denied when there is none.
// See docs/architecture.md#memstore in the repository.
package memstore
