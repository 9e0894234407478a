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

// openStore returns the in-process store when url is empty, else the Redis
// store at url once Redis has answered; where says which, for the log.
func openStore(ctx context.Context, url, prefix string) (s ratekit.Store, where string, closeStore func(), err error) {
	if url == "" {
		return memstore.New(), "in-process store (set -redis or REDIS_URL to share limits through Redis)", func() {}, nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("-redis: %w", err)
	}
	opts.ContextTimeoutEnabled = true // the interceptors' 100 ms timeout bounds socket I/O too
	client := redis.NewClient(opts)
	rs, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err == nil {
		ping, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = rs.Ping(ping)
		cancel()
	}
	if err != nil {
		client.Close()
		return nil, "", nil, err
	}
	return rs, "Redis at " + opts.Addr + " (prefix " + prefix + ")", func() { client.Close() }, nil
}
