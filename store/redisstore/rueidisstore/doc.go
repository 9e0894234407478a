// Package rueidisstore is the Redis ratekit.Store over rueidis
// (github.com/redis/rueidis), whose client pipelines concurrent commands on
// shared connections: many decisions in flight share a few connections and
// round trips. It is a thin client of the engine in store/redisengine, as
// store/redisstore is for go-redis: the same Lua library, keys, arguments,
// reply checks and retry rules, so both stores decide alike and may share a
// Redis (use the same prefix to share state).
//
// It works with every rueidis.Client: a single server, a cluster (every
// master gets the library) or a sentinel-managed primary.
//
// # No double charge
//
// rueidis sends a command again after a network error only when the command
// is read-only (its retryable tag, which rueidis's Builder sets for
// read-only commands); the store builds its calls with Builder.Arbitrary,
// which sets no tag, so a call whose reply was lost is never sent again and
// the subject is charged at most once (TestLostReplyChargesOnce). A MOVED or
// ASK reply, after which rueidis sends the call to the right node, proves it
// did not run. The engine itself retries only what provably did not run.
//
// # Timeouts
//
// Every call is bounded by its context: rueidis returns when the context
// ends, whether the command was written or not. Give each call a deadline
// (the middleware does, 100 ms by default); a call cut short may still run
// in Redis, as with any client.
package rueidisstore
