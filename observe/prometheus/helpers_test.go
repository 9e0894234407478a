package ratekitprom_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ratekit/ratekit/observe/observetest"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
)

// newMetrics returns Metrics registered with a registry of their own.
func newMetrics(t testing.TB, opts ...ratekitprom.Option) (*ratekitprom.Metrics, *prometheus.Registry) {
	t.Helper()
	m, err := ratekitprom.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// values gathers reg: every counter and gauge by its series, as in the
// exposition format (name{label="value",...}, labels sorted), and every
// histogram's count as name_count{...}. It checks that each histogram's
// buckets add up to its count.
func values(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			suffix := "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				got[f.GetName()+suffix] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				got[f.GetName()+suffix] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				got[f.GetName()+"_count"+suffix] = float64(h.GetSampleCount())
				checkBuckets(t, f.GetName()+suffix, h)
			default:
				t.Fatalf("unexpected metric type %v of %s", f.GetType(), f.GetName())
			}
		}
	}
	return got
}

// checkBuckets: cumulative counts never fall and end at the sample count;
// a histogram with samples has a positive sum.
func checkBuckets(t *testing.T, name string, h *dto.Histogram) {
	t.Helper()
	var prev uint64
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCount() < prev {
			t.Fatalf("%s: bucket %g holds %d, below the previous %d", name, b.GetUpperBound(), b.GetCumulativeCount(), prev)
		}
		prev = b.GetCumulativeCount()
	}
	if prev > h.GetSampleCount() || (h.GetSampleCount() > 0) != (h.GetSampleSum() > 0) {
		t.Fatalf("%s: buckets reach %d of %d samples, sum %g", name, prev, h.GetSampleCount(), h.GetSampleSum())
	}
}

// format writes the series as values does. Every series of a policy
// exists, at 0, from its first decision.
var format = observetest.Format{
	Names: map[observetest.Metric]string{
		observetest.Decisions:         "ratekit_decisions_total",
		observetest.NearLimit:         "ratekit_near_limit_total",
		observetest.StoreErrors:       "ratekit_store_errors_total",
		observetest.FallbackDecisions: "ratekit_fallback_decisions_total",
		observetest.LatencyCount:      "ratekit_store_latency_seconds_count",
		observetest.FallbackActive:    "ratekit_fallback_active",
		observetest.InFlight:          "ratekit_inflight",
	},
	Policy: "policy", Outcome: "outcome", Quote: true, Zeros: true,
}

// check fails t unless reg holds exactly the series w describes.
func check(t *testing.T, reg prometheus.Gatherer, w observetest.Want) {
	t.Helper()
	observetest.Compare(t, values(t, reg), format.Render(w))
}

type dtoLabel = dto.LabelPair
