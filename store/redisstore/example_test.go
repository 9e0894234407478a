package redisstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/redisstore"
)

// Share one limit across every instance of a service through Redis.
func ExampleNew() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
	store, err := redisstore.New(client, redisstore.WithPrefix("myapp"))
	if err != nil {
		panic(err)
	}
	limiter, err := ratekit.New(store, ratekit.SlidingWindow(100, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	d, err := limiter.Allow(context.Background(), "203.0.113.7")
	fmt.Println(d.Allowed, err)
}

// Register an algorithm of your own, written in Lua against the engine's
// contract, and use it beside the built-in ones.
func ExampleWithAlgorithm() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
	store, err := redisstore.New(client, redisstore.WithAlgorithm("holds", `function(r, key, slots, hold_ms)
  local used = tonumber(redis.call('GET', key) or '0')
  r.allowed, r.remaining, r.reset, r.retry, r.flags = false, math.max(slots - used, 0), 0, 0, 0
  if used + cost > slots then
    r.retry = hold_ms * 1000
    return r
  end
  r.allowed = true
  if charge then
    r.after_remaining, r.after_reset = r.remaining - cost, hold_ms * 1000
    r.op, r.a, r.b = 'set', int(used + cost), hold_ms
  end
  return r
end`))
	if err != nil {
		panic(err)
	}
	limiter, _ := ratekit.New(store, ratekit.Custom("holds", 3, time.Minute, [3]int64{3, 60_000, 0}))
	_, _ = limiter.Allow(context.Background(), "worker-1")
}
