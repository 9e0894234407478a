package redisstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
)

// BenchmarkReputation measures parallel reputation updates (and reads) over
// 10,000 tenants on the shared standalone server, as BenchmarkTake does:
// ns/op, allocs/op, round trips and Redis CPU per call.
func BenchmarkReputation(b *testing.B) {
	srv := redistest.Standalone(b)
	b.Logf("server: %s", srv.Kind)
	p := ratekit.DefaultReputationPolicy()
	for _, op := range []string{"violation", "good", "get"} {
		b.Run(op, func(b *testing.B) {
			hook := &roundTrips{}
			c := srv.NewClient(&redis.Options{PoolSize: 64})
			defer c.Close()
			c.AddHook(hook)
			s := newStore(b, c, redistest.Prefix(b))
			call := map[string]func(context.Context, string, ratekit.ReputationPolicy) (ratekit.Reputation, error){
				"violation": s.RecordViolation, "good": s.RecordGood, "get": s.Reputation,
			}[op]
			tenants := make([]string, 10_000)
			for i := range tenants {
				tenants[i] = "tenant-" + strconv.Itoa(i)
				if _, err := call(context.Background(), tenants[i], p); err != nil { // load the script, create state
					b.Fatal(err)
				}
			}
			admin := srv.NewClient(nil)
			defer admin.Close()
			calls0, usec0 := scriptStats(admin)
			hook.n.Store(0)
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(32)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				for pb.Next() {
					if _, err := call(context.Background(), tenants[i%len(tenants)], p); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(hook.n.Load())/float64(b.N), "roundtrips/op")
			if calls, usec := scriptStats(admin); calls > calls0 {
				b.ReportMetric((usec-usec0)/(calls-calls0), "redis-µs/op")
			}
		})
	}
}

// BenchmarkTakeSuppressed is BenchmarkTake for Suppressed limits: under the
// soft limit (every call admitted without a draw), and in the probabilistic
// range (100 subjects, soft limit 1 per hour, hard limit 10^6).
func BenchmarkTakeSuppressed(b *testing.B) {
	srv := redistest.Standalone(b)
	b.Logf("server: %s", srv.Kind)
	for _, tc := range []struct {
		name     string
		limits   []ratekit.Limit
		subjects int
	}{
		{"under-soft", []ratekit.Limit{ratekit.Suppressed(1<<30, time.Hour, 2)}, 10_000},
		{"probabilistic", []ratekit.Limit{ratekit.Suppressed(1, time.Hour, 1e6)}, 100},
		{"sliding-for-comparison", []ratekit.Limit{ratekit.SlidingWindow(1<<30, time.Hour)}, 10_000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			hook := &roundTrips{}
			c := srv.NewClient(&redis.Options{PoolSize: 64})
			defer c.Close()
			c.AddHook(hook)
			s := newStore(b, c, redistest.Prefix(b))
			keys := make([]string, tc.subjects)
			for i := range keys {
				keys[i] = "user-" + strconv.Itoa(i)
			}
			warm(b, s, keys, tc.limits, min(64, len(keys)))
			admin := srv.NewClient(nil)
			defer admin.Close()
			calls0, usec0 := scriptStats(admin)
			hook.n.Store(0)
			var next, allowed atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(32)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				for pb.Next() {
					d, err := s.Take(context.Background(), keys[i%len(keys)], tc.limits, 1)
					if err != nil {
						b.Error(err)
						return
					}
					if d.Allowed {
						allowed.Add(1)
					}
					i++
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(hook.n.Load())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(allowed.Load())/float64(b.N), "admitted/op")
			if calls, usec := scriptStats(admin); calls > calls0 {
				b.ReportMetric((usec-usec0)/(calls-calls0), "redis-µs/op")
			}
		})
	}
}
