package fallback_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/internal/httpcheck"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
)

// FixedWindow(100) over 4 instances: the local store admits exactly 25 per
// subject per window, and its decisions carry the scaled limit.
func TestScaledFixedWindow(t *testing.T) {
	r := newRig(t, fallback.Config{Instances: 4, Failures: 1})
	r.primary.state.Store(refused)
	for window := range 3 {
		for _, subject := range []string{"alice", "bob"} {
			admitted := 0
			for range 60 {
				d := r.take(t, subject, api)
				if !d.Fallback || d.Limit.Name() != "api" || d.Limit.Spec().Quota != 25 {
					t.Fatalf("window %d: %+v; want a local decision on api with quota 25", window, d)
				}
				if d.Allowed {
					admitted++
				}
			}
			if admitted != 25 {
				t.Fatalf("window %d, %s: %d admitted, want exactly 25", window, subject, admitted)
			}
		}
		r.clock.Advance(time.Minute)
	}
}

// Every algorithm keeps its shape: quotas divided and floored at 1, rates
// divided, windows, precision, queue, block, factor and name kept; custom
// algorithms unchanged; every scaled limit valid.
func TestScaleEveryAlgorithm(t *testing.T) {
	cases := []struct {
		in          ratekit.Limit
		n           int64
		quota       int64
		rate        float64
		unchanged   bool
		description string
	}{
		{in: ratekit.FixedWindow(100, time.Minute), n: 4, quota: 25, rate: 25},
		{in: ratekit.FixedWindow(3, time.Minute).Named("tiny"), n: 4, quota: 1, rate: 1},
		{in: ratekit.SlidingWindow(101, time.Hour).Precision(6 * time.Minute).Block(time.Hour), n: 2, quota: 50, rate: 50},
		{in: ratekit.SlidingLog(5, time.Minute).Named("login").Block(15 * time.Minute), n: 2, quota: 2, rate: 2},
		{in: ratekit.TokenBucket(10, time.Second, 50), n: 4, quota: 12, rate: 2.5},
		{in: ratekit.LeakyBucket(40, 8, time.Second).Queue(2 * time.Second).Named("shaper"), n: 3, quota: 13, rate: 8.0 / 3},
		{in: ratekit.GCRA(100, time.Minute, 20), n: 8, quota: 2, rate: 12.5},
		{in: ratekit.Suppressed(100, time.Minute, 1.5), n: 4, quota: 25, rate: 25},
		{in: ratekit.Calendar(10_000, calendar.Month, nil).Block(time.Hour), n: 4, quota: 2500, rate: 2500},
		{in: ratekit.Calendar(100, calendar.Every(10*time.Second), nil), n: 3, quota: 33, rate: 33},
		{in: ratekit.Custom("mine", 10, time.Minute, [3]int64{7}), n: 4, unchanged: true},
		{in: ratekit.GCRA(1, 300*24*time.Hour, 1), n: 2, unchanged: true, description: "share past 366 days"},
	}
	for _, c := range cases {
		t.Run(c.in.String(), func(t *testing.T) {
			got, in := fallback.Share(c.in, c.n).Spec(), c.in.Spec()
			if c.unchanged {
				if got != in {
					t.Fatalf("%s: got %+v, want it unchanged", c.description, got)
				}
				return
			}
			if got.Quota != c.quota || got.Rate != c.rate {
				t.Fatalf("quota %d rate %v, want %d and %v", got.Quota, got.Rate, c.quota, c.rate)
			}
			if got.Algorithm != in.Algorithm || got.Name != in.Name || got.Window != in.Window || got.Precision != in.Precision ||
				got.MaxWait != in.MaxWait || got.Block != in.Block || got.Factor != in.Factor || got.Params != in.Params ||
				got.Period != in.Period || got.Location != in.Location {
				t.Fatalf("shape changed:\n got %+v\nfrom %+v", got, in)
			}
			if got.ID != in.ID {
				t.Fatalf("the scaled limit's storage identity %q, want the original's %q: other numbers, the same limit", got.ID, in.ID)
			}
			if _, err := ratekit.New(memstore.New(), fallback.Share(c.in, c.n).Named("check")); err != nil {
				t.Fatalf("scaled limit invalid: %v", err)
			}
		})
	}
}

// Decisions while falling back carry the per-instance quota, and the
// middleware's headers show it.
func TestLimiterSeesScaledLimit(t *testing.T) {
	r := newRig(t, fallback.Config{Instances: 2, Failures: 1})
	r.primary.state.Store(refused)
	l, err := ratekit.New(r.store, ratekit.FixedWindow(40, time.Minute).Named("api"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Allow(context.Background(), "192.0.2.1")
	if err != nil || !d.Fallback || d.Limit.Spec().Quota != 20 || d.Remaining != 19 {
		t.Fatalf("%+v, %v; want a local decision of quota 20", d, err)
	}
	rec := httptest.NewRecorder()
	ratekit.Middleware(l, ratekit.ByIP())(httpcheck.OK).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil)) // from 192.0.2.1
	if h := rec.Header(); rec.Code != 200 || h.Get("X-RateLimit-Limit") != "20" || h.Get("X-RateLimit-Remaining") != "18" ||
		h.Get("RateLimit") != `"api";r=18;t=60` || h.Get("RateLimit-Policy") != `"api";q=20;w=60` {
		t.Fatalf("%d %v; want the local share in the headers", rec.Code, h)
	}
}
