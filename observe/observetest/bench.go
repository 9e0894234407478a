package observetest

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// NearEvent is the decision the metrics benchmarks count: allowed on a
// policy, near its limit (1 of 10 left), with a store latency and a
// subject. It moves a decisions counter, the near-limit counter and the
// latency histogram.
var NearEvent = observe.Event{Policy: "api", Quota: 10, Remaining: 1, Cost: 1, Latency: 300 * time.Microsecond, Subject: "192.0.2.1"}

// Benchmark measures obs.Observe(e), e's policy already seen.
func Benchmark(b *testing.B, obs observe.Observer, e observe.Event) {
	ctx := context.Background()
	obs.Observe(ctx, e)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		obs.Observe(ctx, e)
	}
}

// BenchmarkParallel measures the same from every core at once.
func BenchmarkParallel(b *testing.B, obs observe.Observer, e observe.Event) {
	obs.Observe(context.Background(), e)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			obs.Observe(ctx, e)
		}
	})
}

// HeldEvent is an admission that took a slot of the InFlight limit "conc",
// which ReleasedEvent gives back: together they move the in-flight series
// by +1 and -1, and decisions only once.
var (
	HeldEvent     = observe.Event{Policy: "conc", Quota: 10, Remaining: 5, Cost: 1, Latency: 300 * time.Microsecond, Held: "conc", Subject: "192.0.2.1"}
	ReleasedEvent = observe.Event{Outcome: observe.Released, Policy: "conc", Held: "conc", Subject: "192.0.2.1"}
)

// BenchmarkInFlight measures a request's two events, HeldEvent then
// ReleasedEvent, per op, the policy already seen.
func BenchmarkInFlight(b *testing.B, obs observe.Observer) {
	ctx := context.Background()
	obs.Observe(ctx, HeldEvent)
	obs.Observe(ctx, ReleasedEvent)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		obs.Observe(ctx, HeldEvent)
		obs.Observe(ctx, ReleasedEvent)
	}
}
