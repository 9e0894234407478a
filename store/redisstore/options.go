package redisstore

import (
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// ClientOptions returns options for a *redis.Client of the Redis at addr that
// keep the store deciding when Redis slows down (change them as needed):
// ContextTimeoutEnabled, which New requires; PoolSize 128 (calls a second ×
// timeout); no CLIENT SETINFO, no maintenance notifications and
// ConnMaxIdleTime -1, so that no call pays for a new connection. With them
// every call is decided within 100 ms up to 40 ms of added Redis latency
// (TestSlowRedis; docs/operations.md, "Redis settings").
//
// AutoPipelineOptions has the store pipeline its calls while more than 8 are
// in flight (see New): up to 2 batches in flight (a cluster client: a queue
// per CPU core), of about 32 calls, unordered, which the store does not need:
// each caller waits for its own call. Set it to nil to send each call on a
// connection of its own (docs/operations.md, "Pipelining").
func ClientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                     addr,
		ContextTimeoutEnabled:    true,
		PoolSize:                 128,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		ConnMaxIdleTime:          -1,
		AutoPipelineOptions:      &redis.AutoPipelineOptions{MaxConcurrentBatches: 2, MaxBatchSize: 32, Unordered: true},
	}
}
