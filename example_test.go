package ratekit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
)

// Protect a handler with 2 requests per minute per client IP.
func ExampleMiddleware() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	handler := ratekit.Middleware(limiter, ratekit.ByIP())(hello)

	for range 3 {
		req := httptest.NewRequest("GET", "/", nil) // from 192.0.2.1
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		fmt.Printf("%d %s retry-after=%q\n", rec.Code, rec.Header().Get("RateLimit"), rec.Header().Get("Retry-After"))
	}
	// Output:
	// 200 "api";r=1;t=60 retry-after=""
	// 200 "api";r=0;t=60 retry-after=""
	// 429 "api";r=0;t=60 retry-after="60"
}

// Decide in code, with two limits at once: a request passes only if both
// admit it, and a denial charges neither.
func ExampleLimiter_AllowN() {
	limiter, _ := ratekit.New(memstore.New(),
		ratekit.GCRA(10, time.Second, 5).Named("burst"),
		ratekit.FixedWindow(1000, time.Hour).Named("hourly"))
	ctx := context.Background()

	d, _ := limiter.AllowN(ctx, "account-42", 4)
	fmt.Println(d.Allowed, d.Limit.Name(), d.Remaining)
	d, _ = limiter.AllowN(ctx, "account-42", 4)
	fmt.Println(d.Allowed, d.Limit.Name(), d.States[1].Remaining)
	// Output:
	// true burst 1
	// false burst 996
}

// Behind a load balancer at 10.0.0.0/8, read X-Forwarded-For from the right.
func ExampleByIP() {
	key := ratekit.ByIP(clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")))
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "10.1.2.3:4567"
	req.Header.Set("X-Forwarded-For", "203.0.113.9, 198.51.100.20, 10.0.0.7")
	fmt.Println(key(req))
	// Output: 198.51.100.20 <nil>
}

// A response.Error is an error for handlers and an http.Handler for writing.
func ExampleDeniedResponse() {
	d := ratekit.Decision{Limit: ratekit.FixedWindow(5, time.Minute).Named("login"), RetryAfter: 16500 * time.Millisecond}
	rec := httptest.NewRecorder()
	ratekit.DeniedResponse(d, response.CodeTooManyAttempts).ServeHTTP(rec, nil)
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	fmt.Println(rec.Body.String())
	// Output:
	// 429 17
	// {"status":429,"code":"TOO_MANY_ATTEMPTS","message":"Too many attempts. Try again in 17 seconds.","context":{"retryAfter":17,"limit":5,"remaining":0,"policy":"login"}}
}

// Give one account more than the plan's limit, until cleared: the override
// carries the counts (100 used of 200 leaves 100), and it is in force on
// every instance that shares the store from the next decision on.
func ExampleLimiter_Override() {
	limiter, _ := ratekit.New(memstore.New(), ratekit.FixedWindow(100, time.Hour).Named("api"))
	ctx := context.Background()
	for range 100 {
		limiter.Allow(ctx, "account-42")
	}
	d, _ := limiter.Allow(ctx, "account-42")
	fmt.Println(d.Allowed, d.Limit)

	_ = limiter.Override(ctx, "account-42", ratekit.FixedWindow(200, time.Hour).Named("api"), 0)
	d, _ = limiter.Allow(ctx, "account-42")
	fmt.Println(d.Allowed, d.Limit, d.Remaining)
	overrides, _ := limiter.Overrides(ctx, "")
	for _, o := range overrides {
		fmt.Println(o.Subject, o.Limit, o.Expires.IsZero())
	}

	_ = limiter.ClearOverride(ctx, "account-42", "api")
	d, _ = limiter.Allow(ctx, "account-42")
	fmt.Println(d.Allowed, d.Limit)
	// Output:
	// false api: fixed 100 per 1h0m0s
	// true api: fixed 200 per 1h0m0s 99
	// account-42 api: fixed 200 per 1h0m0s true
	// false api: fixed 100 per 1h0m0s
}
