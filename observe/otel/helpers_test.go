package ratekitotel_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekit/ratekit/observe/observetest"
	ratekitotel "github.com/ratekit/ratekit/observe/otel"
)

// newMetrics returns Metrics on an SDK MeterProvider of their own, read by
// the returned ManualReader.
func newMetrics(t testing.TB, opts ...ratekitotel.Option) (*ratekitotel.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := ratekitotel.New(append([]ratekitotel.Option{ratekitotel.WithMeterProvider(mp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m, r
}

// collect reads r once.
func collect(t *testing.T, r *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// values collects r: every counter and gauge data point by instrument name
// and attributes (name{k=v,...}, keys sorted), every histogram's count as
// name_count{...}. It checks that each histogram's buckets add up to its
// count, and that every attribute is one of the two the package documents.
func values(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	key := func(name string, set attribute.Set) string {
		var kvs []string
		for _, kv := range set.ToSlice() {
			if kv.Key != ratekitotel.PolicyKey && kv.Key != ratekitotel.OutcomeKey {
				t.Errorf("%s: unexpected attribute %s", name, kv.Key)
			}
			kvs = append(kvs, string(kv.Key)+"="+kv.Value.Emit())
		}
		return name + "{" + strings.Join(kvs, ",") + "}"
	}
	for _, sm := range collect(t, r).ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					got[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					var n uint64
					for _, c := range p.BucketCounts {
						n += c
					}
					if n != p.Count || (p.Count > 0) != (p.Sum > 0) {
						t.Errorf("%s: buckets hold %d of %d samples, sum %g", m.Name, n, p.Count, p.Sum)
					}
					got[key(m.Name+"_count", p.Attributes)] = float64(p.Count)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return got
}

// format writes the data points as values does. An OpenTelemetry
// instrument has a data point per attribute set measured, so zeros are
// absent, but for the gauge, observed at every collection.
var format = observetest.Format{
	Names: map[observetest.Metric]string{
		observetest.Decisions:         "ratekit.decisions",
		observetest.NearLimit:         "ratekit.near_limit",
		observetest.StoreErrors:       "ratekit.store.errors",
		observetest.FallbackDecisions: "ratekit.fallback.decisions",
		observetest.LatencyCount:      "ratekit.store.latency_count",
		observetest.FallbackActive:    "ratekit.fallback.active",
		observetest.InFlight:          "ratekit.inflight.active_requests",
	},
	Policy: "ratekit.policy", Outcome: "ratekit.outcome",
}

// check fails t unless r collects exactly the data points w describes.
func check(t *testing.T, r *sdkmetric.ManualReader, w observetest.Want) {
	t.Helper()
	observetest.Compare(t, values(t, r), format.Render(w))
}
