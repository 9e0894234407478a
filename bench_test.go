package ratekit_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// discard is a ResponseWriter that keeps nothing but its header map.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// requests returns n requests from n client IPs.
func requests(n int) []*http.Request {
	out := make([]*http.Request, n)
	for i := range out {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255) + ":1234"
		out[i] = r
	}
	return out
}

func benchHandler(b *testing.B, h http.Handler) {
	reqs := requests(10_000)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &discard{h: http.Header{}}
		i := 0
		for pb.Next() {
			clear(w.h)
			h.ServeHTTP(w, reqs[i%len(reqs)])
			i++
		}
	})
}

var noop = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// BenchmarkMiddleware measures the whole pipeline over memstore: key by IP,
// decide, write legacy and IETF headers; 10,000 clients, all allowed.
func BenchmarkMiddleware(b *testing.B) {
	for _, tc := range []struct {
		name   string
		limits []ratekit.Limit
		opts   []ratekit.Option
	}{
		{"fixed", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}, nil},
		{"gcra", []ratekit.Limit{ratekit.GCRA(1e6, time.Second, 1<<40)}, nil},
		{"fixed/no-timeout", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}, []ratekit.Option{ratekit.WithTimeout(0)}},
		{"fixed/no-headers", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}, []ratekit.Option{ratekit.WithHeaders(ratekit.HeadersNone)}},
		{"fixed/observed", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}, []ratekit.Option{ratekit.WithObserver(observe.Func(func(context.Context, observe.Event) {}))}},
		{"fixed/shadow", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour).Shadow()}, nil},
		{"fixed+gcra", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour), ratekit.GCRA(1e6, time.Second, 1<<40)}, nil},
		{"inflight", []ratekit.Limit{ratekit.InFlight(10_000)}, nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l, err := ratekit.New(memstore.New(), tc.limits...)
			if err != nil {
				b.Fatal(err)
			}
			benchHandler(b, ratekit.Middleware(l, ratekit.ByIP(), tc.opts...)(noop))
		})
	}
	b.Run("baseline-no-middleware", func(b *testing.B) { benchHandler(b, noop) })
}

// BenchmarkReserve measures Limiter.Reserve and Release over memstore on
// every core, 10,000 subjects, every call admitted: an InFlight limit (a
// slot taken and given back, and a place in the Limiter's count of
// in-flight requests) and, for comparison, a FixedWindow.
func BenchmarkReserve(b *testing.B) {
	for _, tc := range []struct {
		name  string
		limit ratekit.Limit
	}{
		{"inflight", ratekit.InFlight(10_000)},
		{"fixed", ratekit.FixedWindow(1<<40, time.Hour)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l, err := ratekit.New(memstore.New(), tc.limit)
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]string, 10_000)
			for i := range keys {
				keys[i] = "k" + strconv.Itoa(i)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					r, err := l.Reserve(ctx, keys[i%len(keys)], 1)
					if err != nil || !r.Decision.Allowed {
						b.Fatal(r, err)
					}
					_ = r.Release(ctx)
					i++
				}
			})
		})
	}
}
