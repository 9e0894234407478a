// Package redisengine is ratekit's Redis engine, written once for every Redis
// client: the Lua programs (lua/*.lua), the key schema, the arguments of each
// call (prepared once per set of limits), the checks of every reply, and the
// handling of replies that prove a call did not run. It uses the standard
// library only and talks to Redis through Conn, which a client module
// implements: store/redisstore for go-redis, store/redisstore/rueidisstore for
// rueidis. Users pick one of those; this package is for store authors.
//
// A Conn sends one Command to the node of its keys, never twice; error
// replies come back as *ReplyError, and failures that prove the command was
// not written are wrapped with NotSent. The engine retries only what provably
// did not run. The contract of the decide program and of a custom algorithm
// (Options.Algorithms) is in
// docs/architecture.md#the-redis-engine-storeredisengine in the repository.
package redisengine
