// Package redisstore is the Redis ratekit.Store over go-redis. Every decision
// is one atomic call of the engine in store/redisengine, run on Redis's own
// clock, so all instances of a service that share a Redis share one limit. It
// works with *redis.Client, *redis.ClusterClient, *redis.Ring and
// redis.UniversalClient, on Redis 6.2 and later.
//
// Create the client with ContextTimeoutEnabled: true (New requires it), or
// with ClientOptions, which also keeps the store deciding when Redis slows
// down. New sends nothing to Redis: call Store.Ping when the service starts.
// A call is never sent twice, so a lost reply is an error for the error
// policy and the subject is charged at most once. Every key has a TTL: run
// Redis with maxmemory-policy noeviction (Ping warns otherwise). See
// docs/operations.md#redis-settings and
// docs/architecture.md#the-redis-stores-around-the-engine in the repository.
package redisstore
