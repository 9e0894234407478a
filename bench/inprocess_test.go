package bench

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/ulule/limiter/v3"
	ululememory "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

const nkeys = 10_000

var keys = func() []string {
	ks := make([]string, nkeys)
	for i := range ks {
		ks[i] = "user-" + strconv.Itoa(i)
	}
	return ks
}()

// parallel calls allow over the keys round-robin from every goroutine of
// b.RunParallel, each starting at its own offset, and fails on a denial.
func parallel(b *testing.B, allow func(ctx context.Context, key string) (bool, error)) {
	b.Helper()
	ctx := context.Background()
	for _, k := range keys { // create every key's state before timing
		if ok, err := allow(ctx, k); !ok || err != nil {
			b.Fatalf("warm-up %s: allowed=%v err=%v", k, ok, err)
		}
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(7919))
		for pb.Next() {
			ok, err := allow(ctx, keys[i%nkeys])
			if err != nil || !ok {
				b.Errorf("allowed=%v err=%v", ok, err)
				return
			}
			i++
		}
	})
}

// BenchmarkAllow compares in-process limiters deciding one call each, over
// 10,000 keys, with quotas that never deny.
func BenchmarkAllow(b *testing.B) {
	b.Run("ratekit-memstore-fixed", func(b *testing.B) {
		l, err := ratekit.New(memstore.New(), ratekit.FixedWindow(1<<40, time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		parallel(b, func(ctx context.Context, key string) (bool, error) {
			d, err := l.Allow(ctx, key)
			return d.Allowed, err
		})
	})
	b.Run("ratekit-memstore-gcra", func(b *testing.B) {
		l, err := ratekit.New(memstore.New(), ratekit.GCRA(1e6, time.Second, 1<<40))
		if err != nil {
			b.Fatal(err)
		}
		parallel(b, func(ctx context.Context, key string) (bool, error) {
			d, err := l.Allow(ctx, key)
			return d.Allowed, err
		})
	})
	b.Run("go-limiter-memorystore", func(b *testing.B) {
		st, err := memorystore.New(&memorystore.Config{Tokens: 1 << 40, Interval: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close(context.Background())
		parallel(b, func(ctx context.Context, key string) (bool, error) {
			_, _, _, ok, err := st.Take(ctx, key)
			return ok, err
		})
	})
	b.Run("ulule-memory", func(b *testing.B) {
		l := limiter.New(ululememory.NewStore(), limiter.Rate{Period: time.Hour, Limit: 1 << 40})
		parallel(b, func(ctx context.Context, key string) (bool, error) {
			c, err := l.Get(ctx, key)
			return !c.Reached, err
		})
	})
	b.Run("xtime-rate-map", func(b *testing.B) {
		var m sync.Map // key -> *rate.Limiter
		parallel(b, func(_ context.Context, key string) (bool, error) {
			v, ok := m.Load(key)
			if !ok {
				v, _ = m.LoadOrStore(key, rate.NewLimiter(1e9, 1<<30))
			}
			return v.(*rate.Limiter).Allow(), nil
		})
	})
}

// discard is a ResponseWriter that keeps only the status and the headers,
// reset between requests.
type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }

// serve runs pre-built requests from 10,000 client addresses through h from
// every goroutine of b.RunParallel and fails on any status but 200.
func serve(b *testing.B, h http.Handler) {
	b.Helper()
	reqs := make([]*http.Request, nkeys)
	for i := range reqs {
		r, err := http.NewRequest(http.MethodGet, "http://example.test/", nil)
		if err != nil {
			b.Fatal(err)
		}
		r.RemoteAddr = "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255) + ":40000"
		reqs[i] = r
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &discard{h: http.Header{}}
		i := int(next.Add(7919))
		for pb.Next() {
			clear(w.h)
			w.code = http.StatusOK
			h.ServeHTTP(w, reqs[i%nkeys])
			if w.code != http.StatusOK {
				b.Errorf("status %d", w.code)
				return
			}
			i++
		}
	})
}

var noop = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// BenchmarkMiddleware compares in-process net/http middlewares keyed by
// client IP, with quotas that never deny.
func BenchmarkMiddleware(b *testing.B) {
	b.Run("ratekit-memstore", func(b *testing.B) {
		l, err := ratekit.New(memstore.New(), ratekit.FixedWindow(1<<40, time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		serve(b, ratekit.Middleware(l, ratekit.ByIP())(noop))
	})
	b.Run("httprate-LimitByIP", func(b *testing.B) {
		serve(b, httprate.LimitByIP(1<<40, time.Hour)(noop))
	})
}
