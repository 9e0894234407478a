// Package memstore is the in-process ratekit.Store. It gives the same answers
// as store/redisstore — same algorithms, same integer microsecond arithmetic,
// same expiry — for a single process: use it for tests, for single-instance
// services, or as a fallback when Redis is unreachable. It is a locking host
// around the kit's algorithm core (internal/algo), whose arithmetic the
// Redis engine's Lua mirrors.
//
// State is held in sharded maps guarded by mutexes; every call locks the one
// shard that owns its subject, so the limits of one call are decided
// atomically. A shard maps each subject to its limits' state, which a call
// looks up once and updates in place: a call with one limit allocates
// nothing once its subject has state. A subject longer than 64 bytes is held
// as its SHA-256 padded to 65 bytes, so it costs the store 65 bytes however
// long it is, and never shares state with a shorter subject.
//
// Expired state is dropped by a background sweeper every second of real time
// (see WithClock for a store on its own clock), by Sweep, and from a shard at
// most once per second of the store's clock during a call that touches it; a
// shard's map that has shrunk well below its peak is rebuilt, so memory goes
// back after a burst. Close stops the sweeper. The number of entries is
// bounded, by DefaultMaxEntries unless WithMaxEntries says otherwise; at the
// bound a new subject takes the place of state that admits, never of a
// denial, and is denied when there is none.
package memstore
