package redisstore

import (
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// ClientOptions returns options for a *redis.Client of the Redis at addr that
// keep the store's calls decided when Redis slows down (change them as
// needed): besides ContextTimeoutEnabled, which New requires, PoolSize 128
// (the calls in flight at once: size it at calls a second × timeout), no
// CLIENT SETINFO and no maintenance notifications (a new connection costs
// HELLO and the call, two round trips) and ConnMaxIdleTime -1 (no reconnecting
// as traffic rises). With them every call is decided within 100 ms up to
// 40 ms of added Redis latency (TestSlowRedis; docs/operations.md, "Redis
// settings").
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
