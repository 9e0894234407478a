package ratekit_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestObserverSeesCachedDenials: through Middleware, a denial answered by a
// deny cache reaches the observer with Cached set, and its 429 carries the
// Retry-After left, not the one the store gave; alike for a window from the
// first request, a calendar minute and an aligned one, all starting at 12:00.
func TestObserverSeesCachedDenials(t *testing.T) {
	for _, limit := range []ratekit.Limit{ratekit.FixedWindow(1, time.Minute), ratekit.Calendar(1, calendar.Minute, nil), ratekit.Calendar(1, calendar.Every(time.Minute), nil)} {
		t.Run(limit.String(), func(t *testing.T) { cachedDenials(t, limit.Named("api")) })
	}
}

func cachedDenials(t *testing.T, limit ratekit.Limit) {
	clock := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	ms := memstore.New(memstore.WithClock(clock.Now))
	t.Cleanup(func() { ms.Close() })
	l, err := ratekit.New(denycache.New(ms, denycache.WithClock(clock.Now)), limit)
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(&rec))(ok)
	steps := []struct {
		advance    time.Duration
		status     int
		retryAfter string
		want       observe.Event
	}{
		{0, 200, "", observe.Event{Outcome: observe.Allowed}},
		{0, 429, "60", observe.Event{Outcome: observe.Denied}},
		{20 * time.Second, 429, "40", observe.Event{Outcome: observe.Denied, Cached: true}},
		{39 * time.Second, 429, "1", observe.Event{Outcome: observe.Denied, Cached: true}},
		{time.Second, 200, "", observe.Event{Outcome: observe.Allowed}},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code != s.status || w.Header().Get("Retry-After") != s.retryAfter {
			t.Fatalf("step %d: %d Retry-After %q, want %d %q", i, w.Code, w.Header().Get("Retry-After"), s.status, s.retryAfter)
		}
		got := rec.events[len(rec.events)-1]
		if len(rec.events) != i+1 || got.Outcome != s.want.Outcome || got.Cached != s.want.Cached || got.Policy != "api" || got.Quota != 1 {
			t.Fatalf("step %d: event %+v (%d events), want outcome %v, cached %v", i, got, len(rec.events), s.want.Outcome, s.want.Cached)
		}
	}
}

// TestCachedShadowDenial: a Limiter of shadow limits lets a cached denial
// pass (ShadowDenied, Cached), and that leaves the cached denial intact for
// a Limiter that enforces the same limit.
func TestCachedShadowDenial(t *testing.T) {
	ms := memstore.New()
	t.Cleanup(func() { ms.Close() })
	cache := denycache.New(ms)
	lim := ratekit.FixedWindow(1, time.Minute).Named("api")
	shadow, err1 := ratekit.New(cache, lim.Shadow())
	enforced, err2 := ratekit.New(cache, lim)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	ctx := context.Background()
	for i, want := range []struct{ cached bool }{{false}, {false}, {true}, {true}} {
		d, err := shadow.Allow(ctx, "k")
		if err != nil || !d.Allowed || (i > 0) != d.ShadowDenied || d.Cached != want.cached {
			t.Fatalf("shadow call %d: %+v, %v", i, d, err)
		}
	}
	d, err := enforced.Allow(ctx, "k")
	if err != nil || d.Allowed || !d.Cached || d.RetryAfter <= 0 || len(d.States) != 0 {
		t.Fatalf("enforced: %+v, %v", d, err)
	}
}
