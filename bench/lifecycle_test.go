package bench

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// BenchmarkLifecycle measures, per request on a real redis-server, what
// charging through a request's life costs beside a plain fixed window (one
// Take): an InFlight slot (Reserve, then Release when the handler ends), a
// slot beside a fixed window, and a charge settled after the response
// (Reserve 10, then Settle the real cost). 10,000 subjects, 32 goroutines
// per CPU; it reports round trips and Redis CPU (µs, INFO commandstats) per
// request.
func BenchmarkLifecycle(b *testing.B) {
	srv := redistest.Standalone(b)
	fixed := ratekit.FixedWindow(1<<40, time.Hour)
	slots := ratekit.InFlight(10_000)
	cases := []struct {
		name   string
		limits []ratekit.Limit
		do     func(ctx context.Context, l *ratekit.Limiter, key string) error
	}{
		{"fixed/take", []ratekit.Limit{fixed}, func(ctx context.Context, l *ratekit.Limiter, key string) error {
			_, err := l.Allow(ctx, key)
			return err
		}},
		{"inflight/reserve+release", []ratekit.Limit{slots}, reserveThen(func(ctx context.Context, r *ratekit.Reservation) error {
			return r.Release(ctx)
		})},
		{"inflight+fixed/reserve+release", []ratekit.Limit{slots, fixed}, reserveThen(func(ctx context.Context, r *ratekit.Reservation) error {
			return r.Release(ctx)
		})},
		{"fixed/reserve", []ratekit.Limit{fixed}, reserveThen(func(ctx context.Context, r *ratekit.Reservation) error {
			return nil
		})},
		{"fixed/reserve+settle", []ratekit.Limit{fixed}, reserveThen(func(ctx context.Context, r *ratekit.Reservation) error {
			return r.Settle(ctx, 3)
		})},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			hook := &roundTrips{}
			c := srv.NewClient(&redis.Options{PoolSize: 64})
			defer c.Close()
			c.AddHook(hook)
			s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(b)))
			if err != nil {
				b.Fatal(err)
			}
			l, err := ratekit.New(s, tc.limits...)
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]string, 10_000)
			for i := range keys {
				keys[i] = "user-" + strconv.Itoa(i)
			}
			ctx := context.Background()
			for i := range 64 { // load the library, open the pool's connections
				if err := tc.do(ctx, l, keys[i]); err != nil {
					b.Fatal(err)
				}
			}
			_, usec0 := redistest.ScriptCPU(srv.Addr)
			hook.n.Store(0)
			redistest.RunParallel(b, len(keys), func(i int) error { return tc.do(ctx, l, keys[i]) })
			b.ReportMetric(float64(hook.n.Load())/float64(b.N), "roundtrips/req")
			if _, usec := redistest.ScriptCPU(srv.Addr); usec > usec0 {
				b.ReportMetric((usec-usec0)/float64(b.N), "redis-µs/req")
			}
		})
	}
}

// reserveThen returns a request that reserves 10 and then ends its
// reservation with end.
func reserveThen(end func(ctx context.Context, r *ratekit.Reservation) error) func(ctx context.Context, l *ratekit.Limiter, key string) error {
	return func(ctx context.Context, l *ratekit.Limiter, key string) error {
		r, err := l.Reserve(ctx, key, 10)
		if err != nil {
			return err
		}
		return end(ctx, r)
	}
}

// roundTrips counts the commands and pipelines a client sends.
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}
