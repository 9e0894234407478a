package ratekit_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit/store/storetest"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/response"
)

func wantHeaders(t *testing.T, r reply, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}

func TestHeadersAndBody(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(2, time.Minute).Named("api"))
	srv := serve(t, l, ratekit.ByIP())

	before := time.Now()
	first := get(t, srv.URL)
	after := time.Now()
	if first.Status != 200 || first.Body != "handler" {
		t.Fatalf("first: %d %q", first.Status, first.Body)
	}
	wantHeaders(t, first, map[string]string{
		"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1",
		"RateLimit-Policy": `"api";q=2;w=60`, "RateLimit": `"api";r=1;t=60`,
		"Retry-After": "", "Cache-Control": "",
	})
	reset, _ := strconv.ParseInt(first.Header.Get("X-RateLimit-Reset"), 10, 64)
	if lo, hi := before.Add(59*time.Second).Unix(), after.Add(61*time.Second).Unix(); reset < lo || reset > hi {
		t.Errorf("X-RateLimit-Reset %d outside [%d, %d]", reset, lo, hi)
	}

	get(t, srv.URL)
	denied := get(t, srv.URL)
	if denied.Status != http.StatusTooManyRequests {
		t.Fatalf("third: %d", denied.Status)
	}
	// 60 s unless a loaded machine took over a second between the requests
	retry := denied.Header.Get("Retry-After")
	if retry != "60" && retry != "59" {
		t.Fatalf("Retry-After %q, want 60 (or 59 on a slow run)", retry)
	}
	wantHeaders(t, denied, map[string]string{
		"Content-Type": "application/json", "Cache-Control": "no-store",
		"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0",
		"RateLimit-Policy": `"api";q=2;w=60`, "RateLimit": `"api";r=0;t=` + retry,
	})
	want := `{"status":429,"code":"RATE_LIMITED","message":"Too many requests. Try again in ` + retry +
		` seconds.","context":{"retryAfter":` + retry + `,"limit":2,"remaining":0,"policy":"api"}}`
	if denied.Body != want {
		t.Errorf("body:\n%s\nwant\n%s", denied.Body, want)
	}
}

func TestSeveralLimitsInHeaders(t *testing.T) {
	l := newLimiter(t, ratekit.GCRA(10, time.Second, 5).Named("burst"), ratekit.FixedWindow(1000, time.Hour).Named("hourly"))
	r := get(t, serve(t, l, ratekit.ByIP()).URL)
	wantHeaders(t, r, map[string]string{
		"RateLimit-Policy":  `"burst";q=10;w=1, "hourly";q=1000;w=3600`,
		"RateLimit":         `"burst";r=4;t=1, "hourly";r=999;t=3600`,
		"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "4",
	})
}

func TestProblemJSON(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(1, time.Hour).Named("api"))
	srv := serve(t, l, ratekit.ByIP(), ratekit.WithRenderer(response.Problem), ratekit.WithHeaders(ratekit.HeadersNone))
	get(t, srv.URL)
	r := get(t, srv.URL)
	want := `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"Too many requests. Try again in 3600 seconds.","violated-policies":["api"],"code":"RATE_LIMITED","retryAfter":3600,"limit":1,"remaining":0,"policy":"api"}`
	if r.Status != 429 || r.Body != want || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("%d %s %q", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if r.Header.Get("X-RateLimit-Limit") != "" || r.Header.Get("RateLimit") != "" || r.Header.Get("Retry-After") != "3600" {
		t.Errorf("HeadersNone wrote %v", r.Header)
	}
}

func TestCostSkipAndUnsatisfiable(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(5, time.Minute).Named("api"))
	srv := serve(t, l, ratekit.ByIP(),
		ratekit.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/health" }),
		ratekit.WithCostFunc(func(r *http.Request) int64 { n, _ := strconv.ParseInt(r.URL.Query().Get("cost"), 10, 64); return n }))
	if r := get(t, srv.URL+"/?cost=3"); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Fatalf("cost 3: %d remaining %s", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
	if r := get(t, srv.URL+"/?cost=3"); r.Status != 429 || r.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Fatalf("cost 3 over 2 left: %d remaining %s", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
	for range 3 {
		if r := get(t, srv.URL+"/health"); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("skipped route: %d %v", r.Status, r.Header)
		}
	}
	if r := get(t, srv.URL+"/?cost=2"); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("cost 2: %d remaining %s (skipped requests must not count)", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
	r := get(t, srv.URL+"/?cost=6")
	want := `{"status":429,"code":"RATE_LIMITED","message":"Too many requests. This request costs more than the limit allows; it can never pass.","context":{"limit":5,"remaining":0,"policy":"api"}}`
	if r.Status != 429 || r.Body != want || r.Header.Get("Retry-After") != "" {
		t.Fatalf("cost 6 of 5: %d Retry-After %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
}

func TestDeniedHandler(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(1, time.Minute))
	srv := serve(t, l, ratekit.ByIP(), ratekit.WithDeniedHandler(func(w http.ResponseWriter, r *http.Request, d ratekit.Decision) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("slow down " + d.Limit.Name()))
	}))
	get(t, srv.URL)
	r := get(t, srv.URL)
	if r.Status != http.StatusTeapot || r.Body != "slow down fixed" || r.Header.Get("Retry-After") != "60" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("%d %q %v", r.Status, r.Body, r.Header)
	}
}

// failingStore fails every call, as an unreachable store does.
type failingStore struct{}

func (s failingStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (failingStore) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errors.New("dial tcp 10.1.2.3:6379: secret internal detail")
}
func (failingStore) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	return ratekit.Decision{}, errors.New("secret internal detail")
}
func (failingStore) Reset(context.Context, string, []ratekit.Limit) error {
	return errors.New("secret")
}

// TestErrorPolicies: key and cost errors (which a client can provoke) follow
// the key-error policy, 400 by default; store errors follow the error
// policy, fail open by default. Nothing internal reaches a response.
func TestErrorPolicies(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(1, time.Minute))
	broken, _ := ratekit.New(failingStore{}, ratekit.FixedWindow(1, time.Minute))
	var seen atomic.Int64
	onErr := ratekit.WithErrorHandler(func(r *http.Request, err error) { seen.Add(1) })
	badKey := ratekit.KeyFunc(func(*http.Request) (string, error) { return "", errors.New("secret internal detail") })
	bad := `{"status":400,"code":"BAD_REQUEST","message":"The request lacks what this service counts requests by.","context":{}}`
	unavailable := `{"status":503,"code":"SERVICE_UNAVAILABLE","message":"Service temporarily unavailable. Try again in 1 second.","context":{"retryAfter":1}}`

	for name, tc := range map[string]struct {
		l      *ratekit.Limiter
		key    ratekit.KeyFunc
		opts   []ratekit.Option
		status int
		body   string
	}{
		"key error":                    {l, badKey, nil, 400, bad},
		"missing header":               {l, ratekit.ByHeader("X-Api-Key"), nil, 400, bad},
		"invalid cost":                 {l, ratekit.ByIP(), []ratekit.Option{ratekit.WithCost(-1)}, 400, bad},
		"key error, key policy open":   {l, badKey, []ratekit.Option{ratekit.WithKeyErrorPolicy(ratekit.FailOpen)}, 200, "handler"},
		"store error":                  {broken, ratekit.ByIP(), nil, 200, "handler"},
		"store error, fail closed":     {broken, ratekit.ByIP(), []ratekit.Option{ratekit.WithErrorPolicy(ratekit.FailClosed)}, 503, unavailable},
		"key error beats store policy": {broken, badKey, []ratekit.Option{ratekit.WithErrorPolicy(ratekit.FailClosed)}, 400, bad},
	} {
		t.Run(name, func(t *testing.T) {
			before := seen.Load()
			r := get(t, serve(t, tc.l, tc.key, append(tc.opts, onErr)...).URL)
			if r.Status != tc.status || r.Body != tc.body || leaks(r) {
				t.Fatalf("%d %q, want %d %q", r.Status, r.Body, tc.status, tc.body)
			}
			if r.Header.Get("X-Ratelimit-Limit") != "" {
				t.Fatalf("rate-limit headers without a decision: %v", r.Header)
			}
			if want := map[int]string{400: "", 503: "1", 200: ""}[tc.status]; r.Header.Get("Retry-After") != want {
				t.Fatalf("Retry-After %q, want %q", r.Header.Get("Retry-After"), want)
			}
			if seen.Load() != before+1 {
				t.Fatal("the error handler did not see the error")
			}
		})
	}
}
