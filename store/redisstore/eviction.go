package redisstore

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

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
// of a *redis.Ring, and returns an error naming the address and the cause,
// e.g. "ratekit: redisstore: cannot reach Redis at 127.0.0.1:6379: dial tcp
// 127.0.0.1:6379: connect: connection refused". A client of another type gets
// one PING, sent as it routes it.
//
// When every node answers, Ping tries every kind of call the engine makes
// on each master (each shard of a Ring), about a probe subject under the
// store's prefix whose keys that node holds (Engine.Probe: a Reserve and
// its refund, Takes that admit, deny and meet a block, a Peek, a Reset; the
// keys live a second at most and are deleted at once), which also loads
// the engine where it is missing. So a Redis user that may not use the
// store's keys, run its program or the commands inside it fails Ping with
// the fix, e.g. "...: the Redis user may not use the store's keys: allow
// them with the key pattern ~ratekit:*", rather than every request later.
//
// Ping then reads each node's maxmemory and
// maxmemory-policy (CONFIG GET; a server that refuses CONFIG is not checked)
// and logs a warning (WithLogger) for each node that may evict the store's
// keys under memory pressure: any policy but noeviction once maxmemory is
// set. Every key of the store has a TTL, so volatile-* policies evict them
// as readily as allkeys-* ones; an evicted block or counter lets a denied
// client through. Under noeviction a full Redis refuses writes: denials hold
// (they never depend on a write), admitted calls fail and follow the error
// policy.
//
// New sends nothing to Redis, and a store that cannot reach Redis fails every
// call, which the middleware's error policy then lets through (fail open) or
// refuses. Call Ping when the service starts, with a context that bounds it
// (a few seconds: go-redis retries a failed dial for a while), and refuse to
// start or log the error, as you prefer.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.ping(ctx); err != nil {
		return err
	}
	if err := s.probe(ctx); err != nil {
		return err
	}
	for _, w := range s.evictionRisks(ctx) {
		s.logger.Warn("ratekit: redisstore: this Redis may evict the keys that hold blocks and counters, "+
			"letting denied clients through; use maxmemory-policy noeviction, or a Redis of the limiter's own",
			"addr", w.addr, "maxmemory", w.maxmemory, "maxmemory-policy", w.policy)
	}
	return nil
}

// evictionRisk is a node whose settings may evict the store's keys.
type evictionRisk struct {
	addr, policy string
	maxmemory    int64
}

// evictionRisks returns the nodes that may evict the store's keys. Nodes
// that refuse CONFIG GET are skipped.
func (s *Store) evictionRisks(ctx context.Context) []evictionRisk {
	var mu sync.Mutex
	var out []evictionRisk
	check := func(ctx context.Context, c *redis.Client) error {
		cfg, err := c.ConfigGet(ctx, "maxmemory*").Result()
		if err != nil {
			return nil // CONFIG disabled, renamed or denied: nothing to say
		}
		maxmemory, _ := strconv.ParseInt(cfg["maxmemory"], 10, 64)
		if policy := cfg["maxmemory-policy"]; maxmemory > 0 && policy != "noeviction" {
			mu.Lock()
			out = append(out, evictionRisk{addr: c.Options().Addr, policy: policy, maxmemory: maxmemory})
			mu.Unlock()
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
	return out
}
