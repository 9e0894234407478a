// Package redisengine is ratekit's Redis engine, written once for every Redis
// client: the Lua programs (lua/*.lua), the key schema, the arguments of each
// call, the checks of every reply and the retry of calls that provably did not
// run. It talks to Redis through a Conn, which a client module implements:
// store/redisstore for go-redis, store/redisstore/rueidisstore for rueidis.
// Users pick one of those; this package is for store authors. Its contracts
// are in docs/architecture.md#the-redis-engine-storeredisengine.
package redisengine
