package ratekit_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// downStore is a store whose Reserve calls fail, counted.
type downStore struct {
	*memstore.Store
	n atomic.Int64
}

func (s *downStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

var errDown = errors.New("ratekit: test: the store is down")

func (s *downStore) Reserve(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	s.n.Add(1)
	return ratekit.Decision{}, errDown
}

// handlers is a handler that counts the requests running in it and holds
// them until release is closed; each request reports to entered as it
// starts.
type handlers struct {
	inside, most, ran atomic.Int64
	entered           chan struct{}
	release           chan struct{}
}

func newHandlers(n int) *handlers {
	return &handlers{entered: make(chan struct{}, n), release: make(chan struct{})}
}

func (h *handlers) ServeHTTP(http.ResponseWriter, *http.Request) {
	n := h.inside.Add(1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	h.ran.Add(1)
	h.entered <- struct{}{}
	<-h.release
	h.inside.Add(-1)
}

// TestInFlightFailOpenKeepsNPerInstance: while the store fails, Middleware
// (failing open, the default) lets through at most n requests of a subject
// at once on an instance: of 50 concurrent requests whose handlers hold,
// exactly 4 run on InFlight(4), the 46 others are refused (429, as by the
// store) without a store call, and each store error is reported.
func TestInFlightFailOpenKeepsNPerInstance(t *testing.T) {
	const requests, n = 50, 4
	s := &downStore{Store: memstore.New()}
	l, err := ratekit.New(s, ratekit.InFlight(n).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	var reported atomic.Int64
	report := ratekit.WithErrorHandler(func(_ *http.Request, err error) {
		if errors.Is(err, errDown) {
			reported.Add(1)
		}
	})
	h := newHandlers(requests)
	mw := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), report)(h)
	answered := make(chan *httptest.ResponseRecorder, requests)
	var wg sync.WaitGroup
	for range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Header.Set("X-Key", "a")
			rec := httptest.NewRecorder()
			mw.ServeHTTP(rec, req)
			answered <- rec
		}()
	}
	var refused []*httptest.ResponseRecorder
	timeout := time.After(10 * time.Second)
	for seen := 0; seen < requests; { // every request is in a handler or answered
		select {
		case <-h.entered:
			seen++
		case rec := <-answered:
			refused = append(refused, rec)
			seen++
		case <-timeout:
			close(h.release)
			t.Fatalf("10 s: %d handlers entered, %d answered of %d", h.ran.Load(), len(refused), requests)
		}
	}
	close(h.release)
	wg.Wait()
	t.Logf("%d requests, store down: %d handlers at once, %d ran, %d refused, %d store calls, %d errors reported",
		requests, h.most.Load(), h.ran.Load(), len(refused), s.n.Load(), reported.Load())
	if h.most.Load() != n || h.ran.Load() != n || len(refused) != requests-n {
		t.Fatalf("%d handlers at once, %d ran, %d refused; want %d, %d and %d", h.most.Load(), h.ran.Load(), len(refused), n, n, requests-n)
	}
	for _, rec := range refused {
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" || rec.Header().Get("Ratelimit") != `"conc";r=0` {
			t.Fatalf("a refused request: %d %v; want 429, Retry-After 1, RateLimit \"conc\";r=0", rec.Code, rec.Header())
		}
	}
	if s.n.Load() != n || reported.Load() != n {
		t.Fatalf("%d store calls, %d errors reported; want %d and %d (none for a local refusal)", s.n.Load(), reported.Load(), n, n)
	}
	if e := l.GateEntries(); e != 0 {
		t.Fatalf("%d subjects counted once every request ended; want 0", e)
	}
	for i := range 3 { // the places came back: each request asks the store again
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("X-Key", "a")
		mw.ServeHTTP(httptest.NewRecorder(), req)
		if s.n.Load() != int64(n+i+1) {
			t.Fatalf("request %d after the others ended: %d store calls; want %d", i, s.n.Load(), n+i+1)
		}
	}
}

// TestInFlightFailClosedGivesPlaceBack: failing closed, a store error is a
// 503 and the request's place among those in flight is given back at once.
func TestInFlightFailClosedGivesPlaceBack(t *testing.T) {
	s := &downStore{Store: memstore.New()}
	l, err := ratekit.New(s, ratekit.InFlight(1).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	mw := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), ratekit.WithErrorPolicy(ratekit.FailClosed),
		ratekit.WithErrorHandler(func(*http.Request, error) {}))(ok)
	for i := range 5 {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("X-Key", "a")
		rec := httptest.NewRecorder()
		mw.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || s.n.Load() != int64(i+1) {
			t.Fatalf("request %d: %d after %d store calls; want 503 after %d", i, rec.Code, s.n.Load(), i+1)
		}
	}
	if e := l.GateEntries(); e != 0 {
		t.Fatalf("%d subjects counted; want 0", e)
	}
}

// TestInFlightHeldUntilHandlerReturns: a handler that settles its
// Reservation early (freeing the store's slot) still holds its place on
// the instance until it returns: InFlight(1) refuses a second request of the
// subject meanwhile, without a store call.
func TestInFlightHeldUntilHandlerReturns(t *testing.T) {
	s := &reserveCounter{Store: memstore.New()}
	l, err := ratekit.New(s, ratekit.InFlight(1).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	settled, release := make(chan struct{}), make(chan struct{})
	var ran atomic.Int64
	mw := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), ratekit.WithSettle())(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ran.Add(1) > 1 {
			return // a later request answers at once
		}
		if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), 1); err != nil {
			t.Error(err)
		}
		close(settled)
		<-release
	}))
	send := func() int {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("X-Key", "a")
		rec := httptest.NewRecorder()
		mw.ServeHTTP(rec, req)
		return rec.Code
	}
	done := make(chan int, 1)
	go func() { done <- send() }()
	<-settled
	if code := send(); code != http.StatusTooManyRequests || s.n.Load() != 1 {
		close(release)
		t.Fatalf("while the first handler runs: %d after %d store calls; want 429 after 1", code, s.n.Load())
	}
	close(release)
	if code := <-done; code != http.StatusOK {
		t.Fatalf("first request: %d", code)
	}
	if code := send(); code != http.StatusOK || s.n.Load() != 2 {
		t.Fatalf("after the first handler returned: %d after %d store calls; want 200 after 2", code, s.n.Load())
	}
}

// TestInFlightProbeFailsClosed: an instance that holds n of a subject's
// slots lets one request ask the store again once its last answer is
// 100 ms old (an override may have raised n); when the store fails that
// request, the instance refuses it as at capacity (429, no error), so
// failing open never runs more than n of the subject here.
func TestInFlightProbeFailsClosed(t *testing.T) {
	const n = 4
	clock := storetest.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	s := &downStore{Store: memstore.New()}
	l, err := ratekit.New(s, ratekit.InFlight(n).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	l.SetGateClock(clock.Now)
	h := newHandlers(n + 1)
	mw := ratekit.Middleware(l, ratekit.ByHeader("X-Key"))(h)
	request := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("X-Key", "a")
		rec := httptest.NewRecorder()
		mw.ServeHTTP(rec, req)
		return rec
	}
	var wg sync.WaitGroup
	for range n { // the store is down: n run, failing open
		wg.Add(1)
		go func() { defer wg.Done(); request() }()
	}
	for range n {
		<-h.entered
	}
	if rec := request(); rec.Code != http.StatusTooManyRequests || s.n.Load() != n {
		t.Fatalf("at capacity: %d after %d store calls; want 429 without a call", rec.Code, s.n.Load())
	}
	clock.Advance(100 * time.Millisecond)
	answered := make(chan *httptest.ResponseRecorder, 1)
	wg.Add(1)
	go func() { defer wg.Done(); answered <- request() }()
	defer wg.Wait()
	defer close(h.release)
	select {
	case <-h.entered:
		t.Fatalf("the probe 100 ms later ran a handler: %d at once, want at most %d", h.most.Load(), n)
	case rec := <-answered:
		if rec.Code != http.StatusTooManyRequests || s.n.Load() != n+1 {
			t.Fatalf("the probe 100 ms later: %d after %d store calls; want 429 after asking the store once", rec.Code, s.n.Load())
		}
	}
}
