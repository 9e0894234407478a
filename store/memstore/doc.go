// Package memstore is the in-process ratekit.Store. It gives the same answers
// as the Redis stores (same algorithms, integer microsecond arithmetic and
// expiry) for a single process: tests, single-instance services, or
// store/fallback's local store. A call with one limit allocates nothing once
// its subject has state; expired state is swept in the background, and the
// store is bounded (WithMaxEntries). See docs/architecture.md#memstore.
package memstore
