package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/reputation"
)

// BenchmarkReputation measures parallel reputation updates (and reads) over
// 10,000 tenants on the shared standalone server, as BenchmarkTake does:
// ns/op, allocs/op, round trips and Redis CPU per call.
func BenchmarkReputation(b *testing.B) {
	srv := redistest.Standalone(b)
	b.Logf("server: %s", srv.Kind)
	p := reputation.DefaultPolicy()
	for _, op := range []string{"violation", "good", "get"} {
		b.Run(op, func(b *testing.B) {
			hook := &roundTrips{}
			c := srv.NewClient(&redis.Options{PoolSize: 64})
			defer c.Close()
			c.AddHook(hook)
			s := newStore(b, c, redistest.Prefix(b))
			call := map[string]func(context.Context, string, reputation.Policy) (reputation.Reputation, error){
				"violation": s.RecordViolation, "good": s.RecordGood, "get": s.Reputation,
			}[op]
			tenants := make([]string, 10_000)
			for i := range tenants {
				tenants[i] = "tenant-" + strconv.Itoa(i)
				if _, err := call(context.Background(), tenants[i], p); err != nil { // load the script, create state
					b.Fatal(err)
				}
			}
			parallel(b, srv, hook, len(tenants), func(i int) error {
				_, err := call(context.Background(), tenants[i], p)
				return err
			})
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
			var allowed atomic.Int64
			parallel(b, srv, hook, len(keys), func(i int) error {
				d, err := storetest.Take(context.Background(), s, keys[i], tc.limits, 1)
				if err == nil && d.Allowed {
					allowed.Add(1)
				}
				return err
			})
			b.ReportMetric(float64(allowed.Load())/float64(b.N), "admitted/op")
		})
	}
}
