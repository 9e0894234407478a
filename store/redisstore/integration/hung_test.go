package integration_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestHungRedisIsBounded freezes a redis-server (SIGSTOP: connections stay
// open, nothing answers) and times 40 calls of every entry point over it:
// the middleware, a lockout's middleware, Attempt, Enforce, Check and Reset,
// levels (every call hung), and levels whose limits answer but whose
// reputation store hangs (the gate and the record share one budget). Each
// path gets 100 calls from 10 concurrent callers; its p99 must be within the
// timeout (100 ms) + 50 ms.
func TestHungRedisIsBounded(t *testing.T) {
	const timeout, margin = ratekit.DefaultTimeout, 50 * time.Millisecond
	srv := redistest.Private(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	limiter, err := ratekit.New(s, ratekit.FixedWindow(100, time.Minute).Named("api"))
	if err != nil {
		t.Fatal(err)
	}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: time.Minute, Block: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	allHung, err := levels.New(levels.Config{Store: s, Tenant: ratekit.ByHeader("X-Tenant"), Reputation: s,
		Global:    []ratekit.Limit{ratekit.FixedWindow(1000, time.Hour).Named("global")},
		PerTenant: []ratekit.Limit{ratekit.FixedWindow(100, time.Hour).Named("tenant")}})
	if err != nil {
		t.Fatal(err)
	}
	// limits in process, the global one used up: every request goes through
	// the reputation gate, and a passing one records a good request
	mem := memstore.New()
	reputationHung, err := levels.New(levels.Config{Store: mem, Tenant: ratekit.ByHeader("X-Tenant"), Reputation: s,
		Global:    []ratekit.Limit{ratekit.FixedWindow(1, time.Hour).Named("global")},
		PerTenant: []ratekit.Limit{ratekit.FixedWindow(100, time.Hour).Named("tenant")}}, ratekit.WithErrorPolicy(ratekit.FailOpen))
	if err != nil {
		t.Fatal(err)
	}
	handler := func(mw func(http.Handler) http.Handler) http.Handler { return mw(ok) }
	request := func(h http.Handler) func() {
		return func() {
			r := httptest.NewRequest("POST", "/login", nil)
			r.Header.Set("X-Tenant", "acme")
			r.Form = map[string][]string{"username": {"alice"}}
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	ctx := context.Background()
	paths := []struct {
		name string
		call func()
	}{
		{"Middleware", request(handler(ratekit.Middleware(limiter, ratekit.ByIP())))},
		{"lockout.Middleware", request(handler(lo.Middleware(bodykey.FormValue("username"))))},
		{"Lockout.Attempt", func() { _, _ = lo.Attempt(ctx, "alice") }},
		{"Lockout.Enforce", func() { _ = lo.Enforce(ctx, "alice") }},
		{"Lockout.Check", func() { _, _ = lo.Check(ctx, "alice") }},
		{"Lockout.Reset", func() { _ = lo.Reset(ctx, "alice") }},
		{"levels", request(handler(allHung))},
		{"levels, reputation hung", request(handler(reputationHung))},
	}
	request(handler(reputationHung))() // uses up the global limit (in process)
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			times := make([]time.Duration, 100) // 10 callers, 10 calls each
			var wg sync.WaitGroup
			for w := range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w * 10; i < w*10+10; i++ {
						start := time.Now()
						p.call()
						times[i] = time.Since(start)
					}
				}()
			}
			wg.Wait()
			slices.Sort(times)
			p99 := times[98]
			t.Logf("%s: p50 %v, p99 %v, slowest %v", p.name, times[50].Round(time.Millisecond), p99.Round(time.Millisecond),
				times[99].Round(time.Millisecond))
			if times[0] < timeout*9/10 {
				t.Fatalf("fastest call %v: Redis was not hung", times[0])
			}
			if p99 > timeout+margin {
				t.Fatalf("p99 %v, want ≤ %v", p99, timeout+margin)
			}
		})
	}
}
