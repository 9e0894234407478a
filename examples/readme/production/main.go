// Command production is the README's production program: Redis shared by
// every instance, a local fallback while Redis is down, metrics, decision
// logs, and a new limit rolled out in shadow mode.
package main

import (
	"log"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

func main() {
	redisStore, err := redisstore.New(redis.NewClient(redisstore.ClientOptions("127.0.0.1:6379")))
	if err != nil {
		log.Fatal(err)
	}
	// While Redis fails, decide in process at each instance's share of the
	// limits (4 instances: a quarter each); back to Redis once it answers.
	store, err := fallback.New(redisStore, memstore.New(), fallback.Config{
		Instances: 4,
		OnChange: func(open bool, err error) {
			slog.Warn("ratekit fallback", "local", open, "error", err)
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	limiter, err := ratekit.New(store,
		ratekit.GCRA(10, time.Second, 20).Named("burst"),
		ratekit.FixedWindow(2000, time.Hour).Named("hourly").Shadow()) // counted and reported, never refuses
	if err != nil {
		log.Fatal(err)
	}

	metrics, err := ratekitprom.New()
	if err != nil {
		log.Fatal(err)
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(metrics)

	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello\n")) })
	limit := ratekit.Middleware(limiter, ratekit.ByIP(),
		ratekit.WithObserver(metrics, observe.Log(slog.Default())), // decision logs at debug level
		ratekit.WithRenderer(ratekit.RenderProblem))                // 429: IETF quota-exceeded problem

	mux := http.NewServeMux()
	mux.Handle("/api/", limit(api))
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	log.Fatal(http.ListenAndServe(":8080", mux))
}
