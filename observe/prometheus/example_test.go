package ratekitprom_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekit/ratekit"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
	"github.com/ratekit/ratekit/store/memstore"
)

// Count the decisions of a middleware and serve them on /metrics.
func Example() {
	metrics, err := ratekitprom.New()
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)

	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", ratekit.Middleware(limiter, ratekit.ByIP(), ratekit.WithObserver(metrics))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	for range 3 {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/items", nil))
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "ratekit_decisions_total{") && !strings.HasSuffix(line, " 0") ||
			strings.HasPrefix(line, "ratekit_near_limit_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// ratekit_decisions_total{outcome="allowed",policy="api"} 2
	// ratekit_decisions_total{outcome="denied",policy="api"} 1
	// ratekit_near_limit_total{policy="api"} 1
}

// Options: a namespace of your own, a label for the service, buckets for a
// store with a longer timeout.
func ExampleNew_options() {
	metrics, err := ratekitprom.New(
		ratekitprom.WithNamespace("edge"),
		ratekitprom.WithConstLabels(prometheus.Labels{"service": "checkout"}),
		ratekitprom.WithBuckets(prometheus.ExponentialBuckets(0.001, 2, 10)),
	)
	if err != nil {
		log.Fatal(err)
	}
	prometheus.MustRegister(metrics) // the default registry, served by promhttp.Handler()
}
