package ratekitotel_test

import (
	"testing"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/ratekit/ratekit/observe/observetest"
	ratekitotel "github.com/ratekit/ratekit/observe/otel"
)

// BenchmarkObserve: one decision recorded by the SDK, on a policy already
// seen: a decisions counter, the near-limit counter and the latency
// histogram.
func BenchmarkObserve(b *testing.B) {
	m, _ := newMetrics(b)
	observetest.Benchmark(b, m, observetest.NearEvent)
}

// BenchmarkObserveParallel: the same from every core at once.
func BenchmarkObserveParallel(b *testing.B) {
	m, _ := newMetrics(b)
	observetest.BenchmarkParallel(b, m, observetest.NearEvent)
}

// BenchmarkObserveNoop: the package's own cost, on a MeterProvider that
// records nothing.
func BenchmarkObserveNoop(b *testing.B) {
	m, err := ratekitotel.New(ratekitotel.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		b.Fatal(err)
	}
	observetest.Benchmark(b, m, observetest.NearEvent)
}

// BenchmarkObserveInFlight: a request's two events, per op: the admission
// that takes an InFlight slot and the slot's release.
func BenchmarkObserveInFlight(b *testing.B) {
	m, _ := newMetrics(b)
	observetest.BenchmarkInFlight(b, m)
}
