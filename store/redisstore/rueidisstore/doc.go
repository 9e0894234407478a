// Package rueidisstore is the Redis ratekit.Store over rueidis
// (github.com/redis/rueidis), whose client pipelines concurrent commands on
// shared connections. It is a thin client of the engine in store/redisengine,
// as store/redisstore is for go-redis: both decide alike and may share a
// Redis (with the same prefix, they share state). It works with every
// rueidis.Client: a single server, a cluster or a sentinel-managed primary.
//
// rueidis never sends a call of the store again, whatever the client's
// options, so a call whose reply was lost charges its subject at most once.
// Every call is bounded by its context; a call cut short may still run in
// Redis, as with any client. See
// docs/architecture.md#the-redis-stores-around-the-engine in the repository.
package rueidisstore
