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
// AutoPipelineOptions has the store send concurrent calls through the
// client's autopipeliner (see New): up to 8 batches in flight at once, each
// of about 4 calls (a soft cap: calls that queue while every batch is in
// flight go out together), in no set order between callers, which the store
// does not need, since each caller waits for its own call. Small batches
// with several in flight keep Redis and the callers busy at once; go-redis's
// defaults (one batch in flight, up to 200 calls) make them take turns,
// which is slower than a connection per call below about 16 concurrent
// callers (docs/performance.md). Set it to nil to send each call on a
// connection of its own.
func ClientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                     addr,
		ContextTimeoutEnabled:    true,
		PoolSize:                 128,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		ConnMaxIdleTime:          -1,
		AutoPipelineOptions:      &redis.AutoPipelineOptions{MaxConcurrentBatches: 8, MaxBatchSize: 4, Unordered: true},
	}
}
