package ratekitotel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/ratekit/ratekit/observe"
	ratekitotel "github.com/ratekit/ratekit/observe/otel"
)

var benchEvent = observe.Event{Policy: "api", Quota: 10, Remaining: 1, Cost: 1, Latency: 300 * time.Microsecond, Subject: "192.0.2.1"}

// BenchmarkObserve: one decision recorded by the SDK, on a policy already
// seen: a decisions counter, the near-limit counter and the latency
// histogram.
func BenchmarkObserve(b *testing.B) {
	m, _ := newMetrics(b)
	ctx := context.Background()
	m.Observe(ctx, benchEvent)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Observe(ctx, benchEvent)
	}
}

// BenchmarkObserveParallel: the same from every core at once.
func BenchmarkObserveParallel(b *testing.B) {
	m, _ := newMetrics(b)
	m.Observe(context.Background(), benchEvent)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			m.Observe(ctx, benchEvent)
		}
	})
}

// BenchmarkObserveNoop: the package's own cost, on a MeterProvider that
// records nothing.
func BenchmarkObserveNoop(b *testing.B) {
	m, err := ratekitotel.New(ratekitotel.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	m.Observe(ctx, benchEvent)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Observe(ctx, benchEvent)
	}
}
