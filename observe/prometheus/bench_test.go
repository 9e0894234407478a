package ratekitprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// BenchmarkObserve: one decision counted, on a policy already seen. Every
// Event moves a decisions counter and the latency histogram; this one is
// also near its limit.
func BenchmarkObserve(b *testing.B) {
	m, _ := newMetrics(b)
	ctx := context.Background()
	e := observe.Event{Policy: "api", Quota: 10, Remaining: 1, Cost: 1, Latency: 300 * time.Microsecond, Subject: "192.0.2.1"}
	m.Observe(ctx, e)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Observe(ctx, e)
	}
}

// BenchmarkObserveParallel: the same from every core at once.
func BenchmarkObserveParallel(b *testing.B) {
	m, _ := newMetrics(b)
	e := observe.Event{Policy: "api", Quota: 10, Remaining: 5, Cost: 1, Latency: 300 * time.Microsecond}
	m.Observe(context.Background(), e)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			m.Observe(ctx, e)
		}
	})
}
