// Command redis is the README's Redis program: the quick start's limit
// shared by every instance of the service through Redis.
package main

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/redisstore"
)

func main() {
	// ClientOptions sets ContextTimeoutEnabled, which redisstore.New requires.
	client := redis.NewClient(redisstore.ClientOptions("127.0.0.1:6379"))
	store, err := redisstore.New(client, redisstore.WithPrefix("myapp"))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := store.Ping(ctx); err != nil {
		log.Fatal(err) // names the address and the cause, e.g. connection refused
	}

	limiter, err := ratekit.New(store, ratekit.FixedWindow(5, time.Minute).Named("api"))
	if err != nil {
		log.Fatal(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\n"))
	})
	limit := ratekit.Middleware(limiter, ratekit.ByIP())
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", limit(hello)))
}
