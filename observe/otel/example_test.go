package ratekitotel_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekit/ratekit"
	ratekitotel "github.com/ratekit/ratekit/observe/otel"
	"github.com/ratekit/ratekit/store/memstore"
)

// Record the decisions of a middleware. A real service gives the
// MeterProvider an exporter's reader (OTLP, Prometheus); this one reads the
// counts back by hand.
func Example() {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	metrics, err := ratekitotel.New(ratekitotel.WithMeterProvider(provider))
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		log.Fatal(err)
	}
	h := ratekit.Middleware(limiter, ratekit.ByIP(), ratekit.WithObserver(metrics))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name != "ratekit.decisions" {
			continue
		}
		for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
			outcome, _ := p.Attributes.Value(ratekitotel.OutcomeKey)
			policy, _ := p.Attributes.Value(ratekitotel.PolicyKey)
			fmt.Printf("%s %s: %d\n", policy.AsString(), outcome.AsString(), p.Value)
		}
	}
	// Unordered output:
	// api allowed: 2
	// api denied: 1
}

// On the global MeterProvider, as set up by the application's telemetry.
func ExampleNew() {
	metrics, err := ratekitotel.New()
	if err != nil {
		log.Fatal(err)
	}
	_ = ratekit.WithObserver(metrics) // give it to ratekit.Middleware
}
