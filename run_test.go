package ratekit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// reserveGuard returns a Guard with an InFlight(1) limit and a FixedWindow of 10
// counting statuses below 500, its Limiter, and a function that reserves
// one request of subject "a".
func reserveGuard(t *testing.T) (*ratekit.Guard, *ratekit.Limiter, func() *ratekit.Reservation) {
	t.Helper()
	l, err := ratekit.New(memstore.New(), ratekit.InFlight(1).Named("conc"), ratekit.FixedWindow(10, time.Minute).Named("api"))
	if err != nil {
		t.Fatal(err)
	}
	g := ratekit.NewGuard(l, ratekit.WithCountIf(func(status int) bool { return status < 500 }))
	return g, l, func() *ratekit.Reservation {
		v := g.Check(context.Background(), "a", nil, 1, http.Header{})
		if !v.Pass || v.Reservation == nil {
			t.Fatalf("verdict %+v, want a pass with a Reservation", v)
		}
		return v.Reservation
	}
}

// leftOf returns what each limit of l has left for "a", by name.
func leftOf(t *testing.T, l *ratekit.Limiter) map[string]int64 {
	t.Helper()
	d, err := l.Peek(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, s := range d.States {
		out[s.Limit.Name()] = s.Remaining
	}
	return out
}

// TestRun: next finds the Reservation; the status it returns decides the
// count (0 is 200); a panic counts as 500 and goes on; every request gives
// its slot back.
func TestRun(t *testing.T) {
	g, l, res := reserveGuard(t)
	fail := func(err error) { t.Error(err) }
	for _, status := range []int{0, 502, 404} {
		r := res()
		g.Run(context.Background(), r, fail, func(ctx context.Context) int {
			if ratekit.ReservationFrom(ctx) != r {
				t.Error("next's context lacks the Reservation")
			}
			return status
		})
	}
	func() {
		defer func() {
			if recover() != "boom" {
				t.Error("the panic did not go on")
			}
		}()
		g.Run(context.Background(), res(), fail, func(context.Context) int { panic("boom") })
	}()
	if got := leftOf(t, l); got["conc"] != 1 || got["api"] != 8 {
		t.Fatalf("left %v, want conc 1, api 8 (the 0 and the 404 counted)", got)
	}
}

// TestRunContextEnds: a request whose context ends keeps its slot until
// next returns (the handler's work is what the slot protects), then frees
// it.
func TestRunContextEnds(t *testing.T) {
	g, l, res := reserveGuard(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.Run(ctx, res(), func(err error) { t.Error(err) }, func(context.Context) int {
		cancel()
		if got := leftOf(t, l)["conc"]; got != 0 {
			t.Fatalf("the slot was freed while next ran: %d left, want 0", got)
		}
		return http.StatusOK
	})
	if got := leftOf(t, l); got["conc"] != 1 || got["api"] != 9 {
		t.Fatalf("left %v, want conc 1, api 9", got)
	}
}

// TestRunSettles: a handler run by Run finds the Verdict's Reservation in
// its context and settles; Run's Finish then leaves the settled charge.
func TestRunSettles(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(100, time.Hour))
	g := ratekit.NewGuard(l, ratekit.WithCost(10), ratekit.WithSettle())
	v := g.Check(context.Background(), "a", nil, 10, http.Header{})
	if !v.Pass || v.Reservation == nil {
		t.Fatalf("verdict %+v, want a pass with a Reservation", v)
	}
	g.Run(context.Background(), v.Reservation, func(err error) { t.Error(err) }, func(ctx context.Context) int {
		if got := ratekit.ReservationFrom(ctx); got != v.Reservation {
			t.Fatalf("ReservationFrom = %p, want %p", got, v.Reservation)
		}
		if err := ratekit.ReservationFrom(ctx).Settle(ctx, 3); err != nil {
			t.Fatal(err)
		}
		return http.StatusOK
	})
	if d, err := l.Peek(context.Background(), "a"); err != nil || d.Remaining != 97 {
		t.Fatalf("remaining %d, %v; want 97 (settled at 3)", d.Remaining, err)
	}
	if ratekit.ReservationFrom(context.Background()) != nil {
		t.Fatal("a Reservation in a context that carries none")
	}
}
