package ratekit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestGuardReservationContext: a transport that puts a Verdict's
// Reservation into its handler's context with ReservationContext lets the
// handler settle, and Finish then leaves the settled charge.
func TestGuardReservationContext(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(100, time.Hour))
	g := ratekit.NewGuard(l, ratekit.WithCost(10), ratekit.WithSettle())
	v := g.Check(context.Background(), "a", nil, 10, http.Header{})
	if !v.Pass || v.Reservation == nil {
		t.Fatalf("verdict %+v, want a pass with a Reservation", v)
	}
	ctx := g.ReservationContext(context.Background(), v.Reservation)
	if got := ratekit.ReservationFrom(ctx); got != v.Reservation {
		t.Fatalf("ReservationFrom = %p, want %p", got, v.Reservation)
	}
	if err := ratekit.ReservationFrom(ctx).Settle(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := g.Finish(ctx, v.Reservation, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	if d, err := l.Peek(context.Background(), "a"); err != nil || d.Remaining != 97 {
		t.Fatalf("remaining %d, %v; want 97 (settled at 3)", d.Remaining, err)
	}
	if ratekit.ReservationFrom(context.Background()) != nil {
		t.Fatal("a Reservation in a context that carries none")
	}
}
