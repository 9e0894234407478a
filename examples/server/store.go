package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

// demoStore is the store behind every route: limits and lockouts.
type demoStore struct {
	limits ratekit.Store
	where  string // said in the first log line and on GET /
	close  func()
}

// openStore returns the in-process store, or the Redis store at c.redisURL
// after checking that Redis answers.
func openStore(ctx context.Context, c config) (*demoStore, error) {
	if c.redisURL == "" {
		m := memstore.New()
		return &demoStore{limits: m, where: "in-process store (set -redis or REDIS_URL to share limits through Redis)", close: func() {}}, nil
	}
	opts, err := redis.ParseURL(c.redisURL)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	opts.ContextTimeoutEnabled = true // the middleware's 100 ms timeout bounds socket I/O too
	client := redis.NewClient(opts)
	s, err := redisstore.New(client, redisstore.WithPrefix(c.prefix))
	if err == nil {
		ping, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = s.Ping(ping)
		cancel()
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	return &demoStore{limits: s, where: "Redis at " + opts.Addr + " (prefix " + c.prefix + ")", close: func() { client.Close() }}, nil
}
