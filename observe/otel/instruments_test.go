package ratekitotel_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/observe/observetest"
	ratekitotel "github.com/ratekit/ratekit/observe/otel"
)

// TestInstruments: the instruments' scope, names, units, kinds and
// temporality, and the latency histogram's default buckets.
func TestInstruments(t *testing.T) {
	m, reader := newMetrics(t)
	m.Observe(context.Background(), observe.Event{Outcome: observe.Error, Policy: "api", Fallback: true, Latency: time.Millisecond})
	m.Observe(context.Background(), observe.Event{Policy: "api", Held: "conc"})
	rm := collect(t, reader)
	if len(rm.ScopeMetrics) != 1 || rm.ScopeMetrics[0].Scope.Name != ratekitotel.ScopeName {
		t.Fatalf("scopes: %+v", rm.ScopeMetrics)
	}
	type kind struct{ unit, data string }
	wantKinds := map[string]kind{
		"ratekit.decisions":          {"{decision}", "counter"},
		"ratekit.near_limit":         {"{decision}", "counter"},
		"ratekit.store.errors":       {"{error}", "counter"},
		"ratekit.fallback.decisions": {"{decision}", "counter"},
		"ratekit.fallback.active":    {"{state}", "gauge"},
		"ratekit.store.latency":      {"s", "histogram"},
		// as http.server.active_requests, and ASP.NET Core's
		// aspnetcore.rate_limiting.active_request_leases
		"ratekit.inflight.active_requests": {"{request}", "updowncounter"},
	}
	seen := map[string]bool{}
	for _, im := range rm.ScopeMetrics[0].Metrics {
		seen[im.Name] = true
		var data string
		switch d := im.Data.(type) {
		case metricdata.Sum[int64]:
			switch {
			case d.Temporality != metricdata.CumulativeTemporality:
			case d.IsMonotonic:
				data = "counter"
			default:
				data = "updowncounter"
			}
		case metricdata.Gauge[int64]:
			data = "gauge"
		case metricdata.Histogram[float64]:
			data = "histogram"
			if b := d.DataPoints[0].Bounds; !slices.Equal(b, ratekitotel.DefaultBuckets()) {
				t.Errorf("latency bounds %v, want %v", b, ratekitotel.DefaultBuckets())
			}
		}
		if w, ok := wantKinds[im.Name]; !ok || im.Unit != w.unit || data != w.data || im.Description == "" {
			t.Errorf("%s: unit %q, %s, description %q; want %+v", im.Name, im.Unit, data, im.Description, w)
		}
	}
	// Recorded: decisions, store errors, fallback decisions, latency, slots
	// in use; and the gauge, always observed. A near limit was not.
	if len(seen) != 6 || seen["ratekit.near_limit"] {
		t.Fatalf("instruments with data: %v", seen)
	}
}

// TestBuckets: the buckets of WithBuckets reach the histogram; invalid ones
// are refused with a prefixed error.
func TestBuckets(t *testing.T) {
	m, reader := newMetrics(t, ratekitotel.WithBuckets([]float64{0.01, 1}))
	m.Observe(context.Background(), observe.Event{Policy: "api", Latency: 20 * time.Millisecond})
	for _, im := range collect(t, reader).ScopeMetrics[0].Metrics {
		if h, ok := im.Data.(metricdata.Histogram[float64]); ok {
			p := h.DataPoints[0]
			if !slices.Equal(p.Bounds, []float64{0.01, 1}) || !slices.Equal(p.BucketCounts, []uint64{0, 1, 0}) {
				t.Fatalf("bounds %v, counts %v", p.Bounds, p.BucketCounts)
			}
		}
	}
	for _, b := range [][]float64{{0.1, 0.1}, {1, 0.5}, {math.NaN()}, {0.1, math.Inf(1)}} {
		m, err := ratekitotel.New(ratekitotel.WithBuckets(b))
		if err == nil || m != nil || !strings.HasPrefix(err.Error(), "ratekit: latency buckets must be finite and increase") {
			t.Errorf("buckets %v: %v", b, err)
		}
	}
}

// TestGlobalProvider: without WithMeterProvider, the instruments live on
// the global MeterProvider.
func TestGlobalProvider(t *testing.T) {
	prev := otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetMeterProvider(prev) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	otel.SetMeterProvider(mp)
	m, err := ratekitotel.New(ratekitotel.WithMeterProvider(nil))
	if err != nil {
		t.Fatal(err)
	}
	m.Observe(context.Background(), observe.Event{Outcome: observe.Denied, Policy: "api"})
	check(t, reader, observetest.Want{Policies: map[string]observetest.Counts{"api": {Denied: 1}}})
}
