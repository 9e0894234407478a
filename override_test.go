package ratekit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// overrideFixture is a Middleware on a Limiter of limits, on memstore with
// a fake clock, its requests all from 192.0.2.1 (ByIP's key).
type overrideFixture struct {
	clock   *storetest.Clock
	limiter *ratekit.Limiter
	handler http.Handler
}

func newOverrideFixture(t *testing.T, limits []ratekit.Limit, opts ...ratekit.Option) *overrideFixture {
	t.Helper()
	c := storetest.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	l, err := ratekit.New(memstore.New(memstore.WithClock(c.Now)), limits...)
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]ratekit.Option{ratekit.WithHeaderClock(c.Now)}, opts...)
	return &overrideFixture{clock: c, limiter: l, handler: ratekit.Middleware(l, ratekit.ByIP(), opts...)(ok)}
}

// overrideSubject is the key of every request of an overrideFixture.
const overrideSubject = "192.0.2.1"

func (f *overrideFixture) get() *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = overrideSubject + ":1234"
	f.handler.ServeHTTP(rec, req)
	return rec
}

// policyItems parses a RateLimit-Policy field of several items with
// sfParams, each item's name to its parameters.
func policyItems(t *testing.T, field string) map[string]map[string]int64 {
	t.Helper()
	out := map[string]map[string]int64{}
	for _, item := range strings.Split(field, ",") {
		name, params := sfParams(t, strings.TrimSpace(item))
		out[name] = params
	}
	return out
}

// wantQuota checks that a response's headers, and a 429's body, show the
// quota q for the limit api (q=, w=60 in RateLimit-Policy).
func wantQuota(t *testing.T, rec *httptest.ResponseRecorder, status int, q int64, what string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("%s: status %d, want %d", what, rec.Code, status)
	}
	name, policy := sfParams(t, rec.Header().Get("RateLimit-Policy"))
	if name != "api" || policy["q"] != q || policy["w"] != 60 {
		t.Fatalf("%s: RateLimit-Policy %q, want api with q=%d;w=60", what, rec.Header().Get("RateLimit-Policy"), q)
	}
	if got := rec.Header().Get("X-RateLimit-Limit"); got != strconv.FormatInt(q, 10) {
		t.Fatalf("%s: X-RateLimit-Limit %q, want %d", what, got, q)
	}
	if status != http.StatusTooManyRequests {
		return
	}
	var body struct {
		Context struct {
			Limit     int64  `json:"limit"`
			Remaining *int64 `json:"remaining"`
			Policy    string `json:"policy"`
		} `json:"context"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: body %q: %v", what, rec.Body, err)
	}
	if body.Context.Limit != q || body.Context.Policy != "api" || body.Context.Remaining == nil || *body.Context.Remaining != 0 {
		t.Fatalf("%s: body %s; want context.limit %d, policy api, remaining 0", what, rec.Body, q)
	}
}

// TestOverrideHeaders: the headers and the 429 body show the numbers in
// force: a fixed window of 100 per minute overridden to 200 says q=200,
// X-RateLimit-Limit 200 and "limit":200, and 100 again once cleared.
func TestOverrideHeaders(t *testing.T) {
	ctx := context.Background()
	f := newOverrideFixture(t, []ratekit.Limit{ratekit.FixedWindow(100, time.Minute).Named("api")})
	for i := range 100 {
		wantQuota(t, f.get(), 200, 100, "the own numbers, request "+strconv.Itoa(i+1))
	}
	wantQuota(t, f.get(), 429, 100, "past the own 100")
	if err := f.limiter.Override(ctx, overrideSubject, ratekit.FixedWindow(200, time.Minute).Named("api"), 0); err != nil {
		t.Fatal(err)
	}
	rec := f.get()
	wantQuota(t, rec, 200, 200, "raised to 200")
	if _, rl := sfParams(t, rec.Header().Get("RateLimit")); rl["r"] != 99 || rl["t"] != 60 {
		t.Fatalf("raised to 200 after 100: RateLimit %q, want r=99;t=60", rec.Header().Get("RateLimit"))
	}
	if got := rec.Header().Get("X-RateLimit-Remaining"); got != "99" {
		t.Fatalf("raised to 200 after 100: X-RateLimit-Remaining %q, want 99", got)
	}
	for range 99 {
		wantQuota(t, f.get(), 200, 200, "raised to 200")
	}
	wantQuota(t, f.get(), 429, 200, "past the override's 200")
	if err := f.limiter.ClearOverride(ctx, overrideSubject, "api"); err != nil {
		t.Fatal(err)
	}
	wantQuota(t, f.get(), 429, 100, "cleared, 200 used")
	f.clock.Advance(time.Minute)
	wantQuota(t, f.get(), 200, 100, "cleared, the next window")
}

// TestOverrideHeadersSeveralLimits: with two limits, RateLimit-Policy
// gives the overridden one's numbers in force and the other's own.
func TestOverrideHeadersSeveralLimits(t *testing.T) {
	ctx := context.Background()
	f := newOverrideFixture(t, []ratekit.Limit{
		ratekit.FixedWindow(100, time.Minute).Named("api"),
		ratekit.GCRA(10, time.Second, 20).Named("burst"),
	})
	items := policyItems(t, f.get().Header().Get("RateLimit-Policy"))
	if items["api"]["q"] != 100 || items["burst"]["q"] != 20 || items["burst"]["w"] != 2 {
		t.Fatalf("own numbers: %v", items)
	}
	if err := f.limiter.Override(ctx, overrideSubject, ratekit.FixedWindow(250, time.Minute).Named("api"), time.Hour); err != nil {
		t.Fatal(err)
	}
	rec := f.get()
	items = policyItems(t, rec.Header().Get("RateLimit-Policy"))
	if len(items) != 2 || items["api"]["q"] != 250 || items["api"]["w"] != 60 || items["burst"]["q"] != 20 || items["burst"]["w"] != 2 {
		t.Fatalf("api overridden to 250: RateLimit-Policy %q", rec.Header().Get("RateLimit-Policy"))
	}
	if got := rec.Header().Get("X-RateLimit-Limit"); got != "20" { // burst binds: 18 left of 20, 248 of 250
		t.Fatalf("X-RateLimit-Limit %q, want burst's 20", got)
	}
	f.clock.Advance(time.Hour) // the override has ended
	items = policyItems(t, f.get().Header().Get("RateLimit-Policy"))
	if items["api"]["q"] != 100 || items["burst"]["q"] != 20 {
		t.Fatalf("once the override ended: %v; want the own numbers", items)
	}
}

// TestOverrideObserved: the observers of the Middlewares built on a
// Limiter get one Overridden event per Override and per limit that
// ClearOverride clears, with the limit's name and the quota now in force;
// a refused override reports nothing.
func TestOverrideObserved(t *testing.T) {
	ctx := context.Background()
	var a, b recorder
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := newOverrideFixture(t, []ratekit.Limit{
		ratekit.FixedWindow(100, time.Minute).Named("api"),
		ratekit.GCRA(10, time.Second, 20).Named("burst"),
	}, ratekit.WithObserver(&a, observe.Log(logger)))
	ratekit.Middleware(f.limiter, ratekit.ByIP(), ratekit.WithObserver(&b))
	overridden := func(r *recorder) []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		var out []string
		for _, e := range r.events {
			if e.Outcome == observe.Overridden {
				out = append(out, e.Subject+" "+e.Policy+" "+strconv.FormatInt(e.Quota, 10))
				if e.Err != nil {
					out[len(out)-1] += " " + e.Err.Error()
				}
			}
		}
		return out
	}
	check := func(what string, want ...string) {
		t.Helper()
		for name, r := range map[string]*recorder{"a": &a, "b": &b} {
			if got := overridden(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: observer %s saw\n%s\nwant\n%s", what, name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if err := f.limiter.Override(ctx, "k", ratekit.FixedWindow(200, time.Minute).Named("api"), 0); err != nil {
		t.Fatal(err)
	}
	check("an override", "k api 200")
	if err := f.limiter.Override(ctx, "k", ratekit.FixedWindow(-1, time.Minute).Named("api"), 0); err == nil {
		t.Fatal("a negative quota accepted")
	}
	if err := f.limiter.Override(ctx, "k", ratekit.FixedWindow(200, time.Minute).Named("nope"), 0); err == nil {
		t.Fatal("an unknown name accepted")
	}
	check("refused overrides", "k api 200")
	if err := f.limiter.Override(ctx, "k", ratekit.GCRA(20, time.Second, 40).Named("burst"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := f.limiter.ClearOverride(ctx, "k", "api"); err != nil {
		t.Fatal(err)
	}
	check("an override and a clearing", "k api 200", "k burst 40", "k api 100")
	if err := f.limiter.ClearOverride(ctx, "k", ""); err != nil {
		t.Fatal(err)
	}
	check("clearing all", "k api 200", "k burst 40", "k api 100", "k api 100", "k burst 20")

	log := buf.String()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 5 {
		t.Fatalf("the log has %d records, want 5:\n%s", len(lines), log)
	}
	for i, want := range []string{"policy=api quota=200", "policy=burst quota=40", "policy=api quota=100", "policy=api quota=100", "policy=burst quota=20"} {
		if !strings.Contains(lines[i], `msg="ratekit override" outcome=overridden `+want) || strings.Contains(lines[i], "subject") {
			t.Fatalf("log record %d: %s; want a ratekit override of %s, without the subject", i, lines[i], want)
		}
	}
}
