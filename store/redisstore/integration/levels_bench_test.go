package integration_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/store/redisstore"
)

// BenchmarkLevels measures Levels on the shared standalone Redis: 10,000
// tenants, every request admitted (global, tenant and endpoint limits, a good
// request recorded), or every request through the reputation gate (global
// limit used up). It reports round trips per request.
func BenchmarkLevels(b *testing.B) {
	srv := redistest.Standalone(b)
	b.Logf("server: %s", srv.Kind)
	for _, tc := range []struct {
		name   string
		global int64
	}{{"admitted", 1 << 40}, {"gated", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			hook := &commands{}
			c := srv.NewClient(&redis.Options{PoolSize: 64})
			defer c.Close()
			c.AddHook(hook)
			s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(b)))
			if err != nil {
				b.Fatal(err)
			}
			mw, err := levels.New(levels.Config{
				Store:      s,
				Tenant:     ratekit.ByHeader("X-Tenant"),
				Global:     []ratekit.Limit{ratekit.FixedWindow(tc.global, time.Hour).Named("global")},
				PerTenant:  []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour).Named("tenant")},
				Endpoints:  []levels.Endpoint{{Pattern: "GET /items", Limits: []ratekit.Limit{ratekit.GCRA(1e6, time.Second, 1<<40).Named("items")}}},
				Reputation: s,
			})
			if err != nil {
				b.Fatal(err)
			}
			reqs := make([]*http.Request, 10_000)
			for i := range reqs {
				reqs[i], _ = http.NewRequest("GET", "/items", nil)
				reqs[i].Header.Set("X-Tenant", "tenant-"+strconv.Itoa(i))
			}
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			w := &discard{h: http.Header{}}
			for _, r := range reqs[:100] { // load the scripts, open connections, use up a global limit of 1
				h.ServeHTTP(w, r)
			}
			hook.n.Store(0)
			benchRequests(b, h, reqs)
			b.ReportMetric(float64(hook.n.Load())/float64(b.N), "roundtrips/op")
		})
	}
}

func benchRequests(b *testing.B, h http.Handler, reqs []*http.Request) {
	b.ReportAllocs()
	b.SetParallelism(32)
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
	b.StopTimer()
}

// discard is a ResponseWriter that keeps nothing but its header map.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
