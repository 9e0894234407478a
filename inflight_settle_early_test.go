package ratekit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestSettleEarlyKeepsSlotAcrossInstances: a handler that settles its cost
// (WithSettle, as the README's example does) and then keeps working still
// holds its InFlight slot in the store until it returns: another instance
// (a second Limiter over the same store) is refused meanwhile. Before, the
// handler's Settle released the store's slot at once, and with k instances
// up to n*k handlers of a subject ran at once (probe: 9 at once for
// InFlight(3) on three instances, memstore and Redis alike).
func TestSettleEarlyKeepsSlotAcrossInstances(t *testing.T) {
	store := memstore.New()
	limits := []ratekit.Limit{ratekit.InFlight(1).Named("busy"), ratekit.FixedWindow(1000, time.Hour).Named("tokens")}
	a, err := ratekit.New(store, limits...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ratekit.New(store, limits...)
	if err != nil {
		t.Fatal(err)
	}
	settled, done, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), 3); err != nil {
			t.Error(err)
		}
		close(settled)
		<-done
	})
	opts := []ratekit.Option{ratekit.WithCost(10), ratekit.WithSettle()}
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-Key", "alice")
		return r
	}
	go func() {
		defer close(finished)
		ratekit.Middleware(a, ratekit.ByHeader("X-Key"), opts...)(slow).ServeHTTP(httptest.NewRecorder(), req())
	}()
	<-settled
	rec := httptest.NewRecorder()
	ratekit.Middleware(b, ratekit.ByHeader("X-Key"), opts...)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(rec, req())
	d, err := a.Peek(context.Background(), "alice")
	close(done)
	<-finished
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("another instance's request while the settled handler runs: %d, want 429", rec.Code)
	}
	if d.States[0].Remaining != 0 {
		t.Errorf("while the settled handler runs, %d busy slots are free in the store, want 0", d.States[0].Remaining)
	}
	// and once it returned, the slot is back and the charge is the settled one
	d, err = a.Peek(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if d.States[0].Remaining != 1 || d.States[1].Remaining != 1000-3 {
		t.Errorf("after the handler returned: busy %d free (want 1), tokens %d left (want 997)", d.States[0].Remaining, d.States[1].Remaining)
	}
}
