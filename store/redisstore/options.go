package redisstore

import (
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// ClientOptions returns options for a *redis.Client of the Redis at addr that
// keep the store's calls decided when Redis slows down; change them as
// needed. With go-redis's defaults a slow Redis empties the pool: calls queue
// for a connection until they time out, a call that times out while it reads
// closes its connection (go-redis cannot reuse it: the reply is still on its
// way), and every new connection spends extra round trips on its handshake
// within the caller's 100 ms, so it times out too. The options are, besides
// ContextTimeoutEnabled (which New requires):
//
//   - PoolSize 128 instead of 10 per CPU: the most calls in flight at once.
//     Calls never outlast their timeout, so 128 serves 1,280 calls a second
//     even when Redis takes the whole 100 ms; for more, set calls a second ×
//     timeout. go-redis opens connections only when calls need them.
//   - DisableIdentity, which skips CLIENT SETINFO: a new connection sends
//     HELLO and then the call, two round trips instead of three.
//   - Maintenance notifications disabled: in its default "auto" mode go-redis
//     sends CLIENT MAINT_NOTIFICATIONS on new connections until a server
//     refuses it (on every one where the server accepts it), a round trip.
//   - ConnMaxIdleTime -1, which keeps idle connections. go-redis closes
//     none in the background; with the default (30 minutes) it closes one
//     that idled that long when a call takes it, that is when traffic rises,
//     and opens a new one within the call's timeout. A connection that the
//     server or the network closed is still found before use and replaced.
//
// Measured (TestSlowRedis: 64 concurrent callers, 100 ms per call), every
// call is decided up to 40 ms of added latency when the connections are
// opened under that latency, and up to 60 ms (80 ms while no call times out)
// on connections opened before it. From about 50 ms on a new connection's two
// round trips no longer fit in 100 ms, so each call that times out costs a
// connection for good.
func ClientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                     addr,
		ContextTimeoutEnabled:    true,
		PoolSize:                 128,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		ConnMaxIdleTime:          -1,
	}
}
