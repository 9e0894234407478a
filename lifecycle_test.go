package ratekit_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestInFlightMiddleware holds requests in their handler: at most n pass
// at once, the next one gets a 429 with Retry-After 1 and the
// concurrent-requests policy, and a slot comes back when a handler returns.
func TestInFlightMiddleware(t *testing.T) {
	l := newLimiter(t, ratekit.InFlight(2).Named("conc"))
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	var inside, most atomic.Int64
	h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		entered <- struct{}{}
		<-release
		inside.Add(-1)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); get(t, srv.URL, "X-Key", "a") }()
	}
	<-entered
	<-entered
	r := get(t, srv.URL, "X-Key", "a")
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("third request: %d, Retry-After %q; want 429, 1", r.Status, r.Header.Get("Retry-After"))
	}
	if got, want := r.Header.Get("RateLimit-Policy"), `"conc";q=2;qu="concurrent-requests"`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got, want := r.Header.Get("RateLimit"), `"conc";r=0`; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	close(release)
	wg.Wait()
	if most.Load() != 2 {
		t.Fatalf("%d in flight at most, want 2", most.Load())
	}
	if d, err := l.Peek(context.Background(), "a"); err != nil || d.Remaining != 2 {
		t.Fatalf("after the handlers returned: %+v, %v; want 2 slots free", d, err)
	}
}

// TestInFlightPanicReleases: a handler that panics gives its slot back.
func TestInFlightPanicReleases(t *testing.T) {
	l := newLimiter(t, ratekit.InFlight(1))
	h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	for range 3 {
		func() {
			defer func() { _ = recover() }()
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set("X-Key", "a")
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
		if d, err := l.Peek(context.Background(), "a"); err != nil || d.Remaining != 1 {
			t.Fatalf("after a panic: %+v, %v; want the slot back", d, err)
		}
	}
}

// TestInFlightNeedsReserve: AllowN refuses a Limiter with InFlight limits.
func TestInFlightNeedsReserve(t *testing.T) {
	l := newLimiter(t, ratekit.InFlight(1))
	if _, err := l.Allow(context.Background(), "a"); err == nil {
		t.Fatal("Allow took a slot nothing releases")
	}
}

// TestCountIf counts only the statuses chosen, under concurrency.
func TestCountIf(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(1000, time.Hour))
	var n atomic.Int64
	h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), ratekit.WithCountIf(func(status int) bool { return status < 500 }))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%3 == 0 {
				w.WriteHeader(http.StatusBadGateway)
			}
		}))
	var wg sync.WaitGroup
	for range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set("X-Key", "a")
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
	}
	wg.Wait()
	if d, _ := l.Peek(context.Background(), "a"); d.Remaining != 1000-200 {
		t.Fatalf("remaining %d, want %d (200 requests of 300 counted)", d.Remaining, 1000-200)
	}
}

// TestSettleInHandler: a handler settles its real cost.
func TestSettleInHandler(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(10_000, time.Hour))
	h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), ratekit.WithCost(100), ratekit.WithSettle())(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			used, _ := strconv.ParseInt(r.URL.Query().Get("used"), 10, 64)
			if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), used); err != nil {
				t.Error(err)
			}
		}))
	for _, used := range []int64{7, 130, 0} {
		req := httptest.NewRequest("GET", "/?used="+strconv.FormatInt(used, 10), nil)
		req.Header.Set("X-Key", "a")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	if d, _ := l.Peek(context.Background(), "a"); d.Remaining != 10_000-137 {
		t.Fatalf("remaining %d, want %d", d.Remaining, 10_000-137)
	}
}

// TestInFlightNeedsASettler: New refuses InFlight limits on a store that
// cannot release slots.
func TestInFlightNeedsASettler(t *testing.T) {
	if _, err := ratekit.New(takeOnly{memstore.New()}, ratekit.InFlight(1)); err == nil {
		t.Fatal("an InFlight limit on a store without Settle")
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

// TestInFlightObserved: an admission that takes slots names them (Held),
// and one Released event follows when the handler returns.
func TestInFlightObserved(t *testing.T) {
	l := newLimiter(t, ratekit.InFlight(2).Named("conc"), ratekit.FixedWindow(10, time.Hour).Named("rate"))
	var mu sync.Mutex
	var got []string
	obs := observerFunc(func(e observe.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Outcome.String()+":"+e.Held)
	})
	h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), ratekit.WithObserver(obs))(ok)
	for range 2 {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-Key", "a")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	want := "[allowed:conc released:conc allowed:conc released:conc]"
	if fmt.Sprint(got) != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}

// observerFunc is an observe.Observer made of a function.
type observerFunc func(observe.Event)

func (f observerFunc) Observe(_ context.Context, e observe.Event) { f(e) }

// TestSettleNeedsASettler: WithSettle and WithCountIf on a store that
// cannot settle fail when the middleware is built.
func TestSettleNeedsASettler(t *testing.T) {
	l, err := ratekit.New(takeOnly{memstore.New()}, ratekit.FixedWindow(1, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []ratekit.Option{ratekit.WithSettle(), ratekit.WithCountIf(func(int) bool { return true })} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("built a middleware that could never settle")
				}
			}()
			ratekit.Middleware(l, ratekit.ByIP(), o)
		}()
	}
}

// TestReleaseFailsLapses: a release the store refuses ends the renewals,
// so the slot lapses within one lease, and observers hear of it once.
func TestReleaseFailsLapses(t *testing.T) {
	st := &failingSettle{Store: memstore.New()}
	l, err := ratekit.New(st, ratekit.InFlight(1).Lease(60*time.Millisecond).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(context.Background(), "a", 1)
	if err != nil || !r.Decision.Allowed {
		t.Fatal(r, err)
	}
	if err := r.Release(context.Background()); err == nil {
		t.Fatal("a refused release reported no error")
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		d, err := l.Peek(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		if d.Remaining == 1 {
			break // lapsed: nothing renewed it
		}
		if time.Now().After(deadline) {
			t.Fatal("the slot was still renewed 2 s after its release failed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// failingSettle is a store whose Settle always fails.
type failingSettle struct{ *memstore.Store }

func (f *failingSettle) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(f, f.Store).Prepare(limits)
}

func (f *failingSettle) Settle(context.Context, string, []ratekit.Limit, *ratekit.Receipt, int64) error {
	return errors.New("store down")
}
