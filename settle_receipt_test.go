package ratekit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestSettleTwiceKeepsOthersCharges: a Reservation settled far above the
// quota and then back gives back only its own charge: A reserves 10, B 50,
// A settles to 150 (the window holds at most one quota of it) and then to
// 10; B's 50 and A's 10 stay charged, so 40 more requests of cost 1 pass,
// not 80.
func TestSettleTwiceKeepsOthersCharges(t *testing.T) {
	for _, l := range []ratekit.Limit{ratekit.FixedWindow(100, time.Hour), ratekit.SlidingWindow(100, time.Hour)} {
		t.Run(l.Name(), func(t *testing.T) {
			lim := newLimiter(t, l)
			ctx := context.Background()
			a, err := lim.Reserve(ctx, "k", 10)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lim.Reserve(ctx, "k", 50); err != nil {
				t.Fatal(err)
			}
			if err := a.Settle(ctx, 150); err != nil {
				t.Fatal(err)
			}
			if err := a.Settle(ctx, 10); err != nil {
				t.Fatal(err)
			}
			passed := 0
			for range 100 {
				if d, err := lim.Allow(ctx, "k"); err == nil && d.Allowed {
					passed++
				}
			}
			if passed != 40 {
				t.Fatalf("%d requests of cost 1 passed after the settlements, want 40", passed)
			}
		})
	}
}

// TestZeroCostHoldsASlotAndSettles: over HTTP, WithCostFunc returning 0 on
// InFlight(4) with WithSettle: 20 concurrent requests run at most 4 at once
// (a request holds one slot whatever its cost), and each settles its 50
// tokens upward from the zero estimate.
func TestZeroCostHoldsASlotAndSettles(t *testing.T) {
	lim := newLimiter(t, ratekit.InFlight(4).Named("conc"), ratekit.FixedWindow(1000, time.Hour).Named("tokens"))
	release := make(chan struct{})
	entered := make(chan struct{}, 20)
	var inside, most, settled atomic.Int64
	h := ratekit.Middleware(lim, ratekit.ByHeader("X-Key"),
		ratekit.WithCostFunc(func(*http.Request) int64 { return 0 }), ratekit.WithSettle(),
	)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		entered <- struct{}{}
		<-release
		inside.Add(-1)
		if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), 50); err != nil {
			t.Error(err)
		}
		settled.Add(1)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); get(t, srv.URL, "X-Key", "a") }()
	}
	for range 4 {
		<-entered
	}
	for range 16 {
		if r := get(t, srv.URL, "X-Key", "a"); r.Status == http.StatusTooManyRequests {
			refused.Add(1)
		}
	}
	close(release)
	wg.Wait()
	if most.Load() != 4 || refused.Load() != 16 || settled.Load() != 4 {
		t.Fatalf("%d at once, %d refused, %d settled; want 4, 16, 4", most.Load(), refused.Load(), settled.Load())
	}
	d, err := lim.Peek(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.States {
		if s.Limit.Name() == "tokens" && s.Remaining != 1000-4*50 {
			t.Fatalf("tokens left %d, want %d", s.Remaining, 1000-4*50)
		}
	}
}
