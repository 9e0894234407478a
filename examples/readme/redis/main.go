// Command redis is the README's Redis program: the quick start with its
// limits shared by every instance of the service through Redis.
package main

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/redis/go-redis/v9"
)

func main() {
	// ContextTimeoutEnabled (set by ClientOptions) is required: a hung Redis
	// then costs a request at most the 100 ms timeout. See "Redis settings".
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

	limiter, err := ratekit.New(store,
		ratekit.GCRA(10, time.Second, 20).Named("burst"),     // 10 per second, bursts of 20
		ratekit.FixedWindow(1000, time.Hour).Named("hourly")) // and 1000 per hour
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\n"))
	})

	limit := ratekit.Middleware(limiter, ratekit.ByIP())
	log.Fatal(http.ListenAndServe(":8080", limit(mux)))
}
