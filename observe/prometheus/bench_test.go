package ratekitprom_test

import (
	"testing"

	"github.com/ratekit/ratekit/observe/observetest"
)

// BenchmarkObserve: one decision counted, on a policy already seen. Every
// Event moves a decisions counter and the latency histogram; this one is
// also near its limit.
func BenchmarkObserve(b *testing.B) {
	m, _ := newMetrics(b)
	observetest.Benchmark(b, m, observetest.NearEvent)
}

// BenchmarkObserveParallel: the same from every core at once, an Event with
// half its quota left.
func BenchmarkObserveParallel(b *testing.B) {
	m, _ := newMetrics(b)
	e := observetest.NearEvent
	e.Remaining, e.Subject = 5, ""
	observetest.BenchmarkParallel(b, m, e)
}

// BenchmarkObserveInFlight: a request's two events, per op: the admission
// that takes an InFlight slot and the slot's release.
func BenchmarkObserveInFlight(b *testing.B) {
	m, _ := newMetrics(b)
	observetest.BenchmarkInFlight(b, m)
}
