// Package memstore is the in-process ratekit.Store. It gives the same answers
// as store/redisstore — same algorithms, same integer microsecond arithmetic,
// same expiry — for a single process: use it for tests, for single-instance
// services, or as a fallback when Redis is unreachable.
//
// State is held in sharded maps guarded by mutexes; every call locks the one
// shard that owns its subject, so the limits of one call are decided
// atomically. Expired state is swept from a shard at most once per second of
// the store's clock, during a call that touches the shard.
package memstore
