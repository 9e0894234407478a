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
// AutoPipelineOptions has the store send its calls through the client's
// autopipeliner while more than 8 are in flight (see New): up to 2 batches
// in flight at once (a cluster client has a queue per CPU core, each with at
// least one), of up to about 32 calls each (a soft cap), in no set
// order between callers, which the store does not need, since each caller
// waits for its own call. go-redis's defaults (one batch in flight, of up to
// 200) make Redis and the callers take turns; two let one batch's callers
// work while Redis runs the other (docs/performance.md). Set it to nil to
// send each call on a connection of its own.
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
