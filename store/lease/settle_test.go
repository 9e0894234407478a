package lease_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
)

// byUser is the tests' key function.
var byUser = ratekit.ByHeader("X-User")

// request serves one request of user through h and returns its status.
func request(h http.Handler, user string) int {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("X-User", user)
	h.ServeHTTP(rec, req)
	return rec.Code
}

// noStoreErrors is an error handler that fails the test: a store error
// under the default fail-open policy would let requests through.
func noStoreErrors(t *testing.T) ratekit.Option {
	return ratekit.WithErrorHandler(func(_ *http.Request, err error) { t.Errorf("store error: %v", err) })
}

// TestInFlightBesideALease: the typical setup, one Limiter with the leased
// rate and a second one with an InFlight limit of 3, both on the lease
// store, one Middleware each. Of 12 requests sent at once while none ends,
// exactly 3 reach the handler and 9 get a 429; once they end their slots
// are back, and the next 12 find 3 again. The rate counted all 24 from its
// leases.
func TestInFlightBesideALease(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(1000, time.Minute).Named("rate"), lease.WithMaxLease(10))
	rate, err := ratekit.New(f.ls, f.limit)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := ratekit.New(f.ls, ratekit.InFlight(3).Named("slots"))
	if err != nil {
		t.Fatalf("an InFlight limit beside a leased one, on the lease store: %v", err)
	}
	ctx := context.Background()
	for round := range 2 {
		release := make(chan struct{})
		entered := make(chan struct{}, 12)
		h := ratekit.Middleware(rate, byUser, noStoreErrors(t))(ratekit.Middleware(slots, byUser, noStoreErrors(t))(
			http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				entered <- struct{}{}
				<-release
			})))
		codes := make(chan int, 12)
		var wg sync.WaitGroup
		for range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes <- request(h, "u")
			}()
		}
		in, refused := 0, 0
		for in+refused < 12 { // each request is in the handler, or answered
			select {
			case <-entered:
				in++
			case c := <-codes:
				if c != http.StatusTooManyRequests {
					t.Errorf("round %d: a request answered %d while the handlers held their slots", round, c)
				}
				refused++
			}
		}
		close(release)
		wg.Wait()
		close(codes)
		for c := range codes {
			if c != http.StatusOK {
				t.Errorf("round %d: an admitted request answered %d", round, c)
			}
		}
		if in != 3 || refused != 9 {
			t.Fatalf("round %d: %d in the handler at once, %d refused; want 3 and 9", round, in, refused)
		}
		if d, err := slots.Peek(ctx, "u"); err != nil || d.Remaining != 3 {
			t.Fatalf("round %d: after the requests ended: %+v, %v; want 3 slots free", round, d, err)
		}
	}
	if got := f.ls.Stats().Spent(); got != 24 {
		t.Fatalf("the leased rate admitted %d requests, want 24", got)
	}
	if d, err := rate.Peek(ctx, "u"); err != nil || d.Remaining != 1000-24 {
		t.Fatalf("the leased rate: %+v, %v; want %d remaining", d, err, 1000-24)
	}
}

// TestSettleBesideALease: Middleware's WithSettle and WithCountIf work on
// the lease store for a Limiter whose limits are not leased: the charge
// is reserved and settled in the inner store, exactly.
func TestSettleBesideALease(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(1000, time.Minute).Named("rate"))
	tokens := ratekit.FixedWindow(1000, time.Hour).Named("tokens")
	l, err := ratekit.New(f.ls, tokens)
	if err != nil {
		t.Fatal(err)
	}
	settled := ratekit.Middleware(l, byUser, ratekit.WithCost(100), ratekit.WithSettle(), noStoreErrors(t))(
		http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), 30); err != nil {
				t.Errorf("Settle: %v", err)
			}
		}))
	failed := ratekit.Middleware(l, byUser, ratekit.WithCost(100), noStoreErrors(t),
		ratekit.WithCountIf(func(status int) bool { return status < 500 }))(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	remaining := func() int64 {
		t.Helper()
		d, err := storetest.Peek(context.Background(), f.ms, "u", []ratekit.Limit{tokens})
		if err != nil {
			t.Fatal(err)
		}
		return d.Remaining
	}
	if c := request(settled, "u"); c != http.StatusOK {
		t.Fatalf("settled request: %d", c)
	}
	if got := remaining(); got != 970 {
		t.Fatalf("reserved 100, settled 30: %d remaining in the inner store, want 970", got)
	}
	if c := request(failed, "u"); c != http.StatusInternalServerError {
		t.Fatalf("uncounted request: %d", c)
	}
	if got := remaining(); got != 970 {
		t.Fatalf("a request that does not count: %d remaining, want 970 (refunded)", got)
	}
	if f.inner.settling.Load() == 0 {
		t.Fatal("no settling call reached the inner store")
	}
}

// TestLeasedLimitCannotSettle: a Limiter that would settle a leased
// limit's charges is refused when it is built, by ratekit.New for one with
// an InFlight limit and by Middleware for WithSettle and WithCountIf, each
// saying what to do. The store's own Reserve, Settle and Renew refuse a
// call that names a leased limit (or the same limit built again), and
// reach no store.
func TestLeasedLimitCannotSettle(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(1000, time.Minute).Named("rate"))
	const want = "cannot settle"
	_, err := ratekit.New(f.ls, f.limit, ratekit.InFlight(3).Named("slots"))
	if !errors.Is(err, ratekit.ErrInvalidLimit) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "not leased") {
		t.Fatalf("New with a leased limit and an InFlight one: %v; want ErrInvalidLimit saying %q and the fix", err, want)
	}
	if strings.Count(err.Error(), "ratekit: ") != 1 || !strings.HasPrefix(err.Error(), "ratekit: ") {
		t.Fatalf("error %q is not prefixed once with ratekit: ", err)
	}
	l, err := ratekit.New(f.ls, f.limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []ratekit.Option{ratekit.WithSettle(), ratekit.WithCountIf(func(int) bool { return true })} {
		func() {
			defer func() {
				p := recover()
				if msg, _ := p.(string); !strings.Contains(msg, want) || !strings.Contains(msg, "WithSettle") {
					t.Errorf("Middleware with a leased limit: panic %v; want one saying %q", p, want)
				}
			}()
			ratekit.Middleware(l, byUser, o)
		}()
	}
	ctx := context.Background()
	if _, err := l.Reserve(ctx, "u", 1); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Limiter.Reserve of a leased limit: %v; want an error saying %q", err, want)
	}
	st := ratekit.Store(f.ls)
	again := []ratekit.Limit{ratekit.InFlight(3), ratekit.FixedWindow(1000, time.Minute).Named("rate")}
	if _, err := storetest.Reserve(ctx, st, "u", again, 1); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Reserve: %v; want an error saying %q", err, want)
	}
	rc := &ratekit.Receipt{Cost: 1, Ends: make([]int64, 2), Lease: "x"}
	if err := storetest.Settle(ctx, st, "u", again, rc, 0); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Settle: %v; want an error saying %q", err, want)
	}
	if _, err := storetest.Renew(ctx, st, "u", again, rc); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Renew: %v; want an error saying %q", err, want)
	}
	if n, m := f.inner.takes.Load(), f.inner.settling.Load(); n != 0 || m != 0 {
		t.Fatalf("refused calls made %d Takes and %d settling calls in the inner store, want none", n, m)
	}
}

// takeOnly hides the settling methods of a store's prepared forms.
type takeOnly struct{ ratekit.Store }

func (s takeOnly) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	p, err := s.Store.Prepare(limits)
	if err != nil {
		return nil, err
	}
	return struct{ ratekit.Prepared }{p}, nil
}

// TestInnerStoreCannotSettle: over an inner store that is no
// store.Settler, ratekit.New refuses an InFlight limit and Middleware
// WithSettle, with the lease store's error, and Reserve, Settle and Renew
// return it.
func TestInnerStoreCannotSettle(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	rate := ratekit.FixedWindow(1000, time.Minute).Named("rate")
	ls, err := lease.New(takeOnly{ms}, []ratekit.Limit{rate})
	if err != nil {
		t.Fatal(err)
	}
	const want = "cannot settle"
	slots := ratekit.InFlight(3).Named("slots")
	if _, err := ratekit.New(ls, slots); !errors.Is(err, ratekit.ErrInvalidLimit) || !strings.Contains(err.Error(), want) {
		t.Fatalf("New with an InFlight limit: %v; want ErrInvalidLimit saying %q", err, want)
	}
	l, err := ratekit.New(ls, ratekit.FixedWindow(10, time.Minute).Named("tokens"))
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if msg, _ := recover().(string); !strings.Contains(msg, want) {
				t.Errorf("Middleware WithSettle: panic %q; want one saying %q", msg, want)
			}
		}()
		ratekit.Middleware(l, byUser, ratekit.WithSettle())
	}()
	ctx := context.Background()
	st := ratekit.Store(ls)
	if _, err := storetest.Reserve(ctx, st, "u", []ratekit.Limit{slots}, 1); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Reserve: %v; want an error saying %q", err, want)
	}
	rc := &ratekit.Receipt{Cost: 1, Ends: make([]int64, 1), Lease: "x"}
	if err := storetest.Settle(ctx, st, "u", []ratekit.Limit{slots}, rc, 0); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Settle: %v; want an error saying %q", err, want)
	}
	if _, err := storetest.Renew(ctx, st, "u", []ratekit.Limit{slots}, rc); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Renew: %v; want an error saying %q", err, want)
	}
}
