// Command production shares its limits through Redis, with a fallback and metrics.
package main

import (
	"context"
	"log"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

func main() {
	// ClientOptions sets ContextTimeoutEnabled, which redisstore.New requires.
	client := redis.NewClient(redisstore.ClientOptions("127.0.0.1:6379"))
	redisStore, err := redisstore.New(client, redisstore.WithPrefix("myapp"))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := redisStore.Ping(ctx); err != nil {
		log.Fatal(err) // names the address and the cause, e.g. connection refused
	}
	// While Redis fails, decide in process at this instance's share of each
	// limit (4 instances: a quarter each); back to Redis once it answers.
	store, err := fallback.New(redisStore, memstore.New(), fallback.Config{Instances: 4,
		OnChange: func(local bool, err error) { slog.Warn("ratekit fallback", "local", local, "error", err) }})
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := ratekit.New(store,
		ratekit.GCRA(10, time.Second, 20).Named("burst"),              // 10 per second, bursts of 20
		ratekit.FixedWindow(2000, time.Hour).Named("hourly").Shadow()) // counted and reported, never refuses
	if err != nil {
		log.Fatal(err)
	}
	metrics, err := ratekitprom.New()
	if err != nil {
		log.Fatal(err)
	}
	prometheus.MustRegister(metrics)
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\n"))
	})
	limit := ratekit.Middleware(limiter, ratekit.ByIP(), ratekit.WithObserver(metrics))
	mux := http.NewServeMux()
	mux.Handle("/", limit(hello))
	mux.Handle("GET /metrics", promhttp.Handler())
	log.Fatal(http.ListenAndServe(":8080", mux))
}
