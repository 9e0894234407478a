package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// WithLogger sets where Ping's warnings go (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(s *Store) {
		if l != nil {
			s.logger = l
		}
	})
}

// Ping checks that Redis answers: it sends PING to the server of a
// *redis.Client, to every master of a *redis.ClusterClient and to every shard
// of a *redis.Ring (once, as routed, through a client of another type), and
// returns an error naming the address and the cause. It then tries every
// kind of call the engine makes on each master or shard (Engine.Probe, with
// keys that live a second at most), which loads the engine where it is
// missing and fails with the fix when the Redis user may not use the store's
// keys or commands. Last, it logs a warning (WithLogger) for each node that
// may evict the store's keys: maxmemory set with a policy but noeviction.
// Call it when the service starts, with a context bounding it to a few
// seconds (go-redis retries a failed dial for a while).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.ping(ctx); err != nil {
		return err
	}
	for _, sub := range s.probeSubjects(ctx) {
		if err := s.eng.Probe(ctx, s, sub); err != nil {
			return fmt.Errorf("ratekit: redisstore: %w", err)
		}
	}
	s.warnEviction(ctx)
	return nil
}

// warnEviction logs a warning for each node that may evict the store's keys
// (see Ping).
func (s *Store) warnEviction(ctx context.Context) {
	check := func(ctx context.Context, c *redis.Client) error {
		cfg, err := c.ConfigGet(ctx, "maxmemory*").Result()
		if err != nil {
			return nil // CONFIG disabled, renamed or denied: nothing to say
		}
		maxmemory, _ := strconv.ParseInt(cfg["maxmemory"], 10, 64)
		if policy := cfg["maxmemory-policy"]; maxmemory > 0 && policy != "noeviction" {
			s.logger.Warn("ratekit: redisstore: this Redis may evict the keys that hold blocks and counters, "+
				"letting denied clients through; use maxmemory-policy noeviction, or a Redis of the limiter's own",
				"addr", c.Options().Addr, "maxmemory", maxmemory, "maxmemory-policy", policy)
		}
		return nil
	}
	switch c := s.proc.(type) {
	case *redis.Client:
		_ = check(ctx, c)
	case *redis.ClusterClient:
		_ = c.ForEachMaster(ctx, check)
	case *redis.Ring:
		_ = c.ForEachShard(ctx, check)
	}
}
