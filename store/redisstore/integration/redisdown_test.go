package integration_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestRedisDown: with Redis refused or hung, the default policy lets the
// request through within the default timeout (100 ms) plus a margin; fail
// closed answers 503. No internal error text reaches a response.
func TestRedisDown(t *testing.T) {
	const margin = 300 * time.Millisecond // scheduling under -race on 2 cores
	for name, addr := range map[string]string{"refused": redistest.ClosedAddr(t), "hung": redistest.Blackhole(t)} {
		t.Run(name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			s, _ := redisstore.New(c)
			l, _ := ratekit.New(s, ratekit.FixedWindow(1, time.Minute))
			var errs atomic.Int64
			onErr := ratekit.WithErrorHandler(func(*http.Request, error) { errs.Add(1) })
			open := serve(t, l, ratekit.ByIP(), onErr)
			closed := serve(t, l, ratekit.ByIP(), onErr, ratekit.WithErrorPolicy(ratekit.FailClosed))
			for i := range 3 {
				start := time.Now()
				r := get(t, open.URL)
				elapsed := time.Since(start)
				if r.Status != 200 || r.Body != "handler" || r.Header.Get("X-RateLimit-Limit") != "" {
					t.Fatalf("fail open %d: %d %q", i, r.Status, r.Body)
				}
				if elapsed > ratekit.DefaultTimeout+margin {
					t.Fatalf("fail open %d took %v, want ≤ %v + %v", i, elapsed, ratekit.DefaultTimeout, margin)
				}
				if r := get(t, closed.URL); r.Status != 503 || leaks(r) {
					t.Fatalf("fail closed %d: %d %q", i, r.Status, r.Body)
				}
			}
			if errs.Load() != 6 {
				t.Fatalf("%d errors reported, want 6", errs.Load())
			}
		})
	}
}
