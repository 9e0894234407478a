package ratekit_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// heldStore is a memstore whose Reserve calls are counted and wait, each on
// a reply channel of its own handed to the test through calls: nil goes on
// to the memstore, an error fails the call with it.
type heldStore struct {
	*memstore.Store
	n     atomic.Int64
	calls chan chan error
}

func (s *heldStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s *heldStore) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	s.n.Add(1)
	reply := make(chan error)
	s.calls <- reply
	if err := <-reply; err != nil {
		return ratekit.Decision{}, err
	}
	return storetest.Reserve(ctx, s.Store, key, limits, cost)
}

// reserved is what a Reserve returned.
type reserved struct {
	r   *ratekit.Reservation
	err error
}

// TestInFlightLocalRefusal: with 3 Reserve calls of one subject under way on
// InFlight(3), or 3 Reservations held, the next Reserve is refused without a
// store call, with the Decision of the store's InFlight denial; a place
// comes back when a Reserve fails or is denied by the store, and when a
// Reservation is settled or released; nothing is kept once none is in
// flight.
func TestInFlightLocalRefusal(t *testing.T) {
	s := &heldStore{Store: memstore.New(), calls: make(chan chan error)}
	l, err := ratekit.New(s, ratekit.InFlight(3).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := func() <-chan reserved {
		out := make(chan reserved, 1)
		go func() {
			r, err := l.Reserve(ctx, "a", 1)
			out <- reserved{r, err}
		}()
		return out
	}
	// atStore starts a Reserve that must reach the store, and returns it
	// with its reply channel.
	atStore := func(step string) (<-chan reserved, chan error) {
		t.Helper()
		out := start()
		select {
		case reply := <-s.calls:
			return out, reply
		case got := <-out:
			t.Fatalf("%s: Reserve answered without the store: %+v, %v", step, got.r.Decision, got.err)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no answer from Reserve in 5 s", step)
		}
		return nil, nil
	}
	admit := func(out <-chan reserved, reply chan error) *ratekit.Reservation {
		t.Helper()
		reply <- nil
		got := <-out
		if got.err != nil || !got.r.Decision.Allowed {
			t.Fatalf("admit: %+v, %v", got.r.Decision, got.err)
		}
		return got.r
	}
	refused := func(step string) {
		t.Helper()
		calls := s.n.Load()
		out := start()
		select {
		case reply := <-s.calls:
			reply <- errors.New("unused")
			t.Fatalf("%s: Reserve asked the store; want a refusal without a store call", step)
		case got := <-out:
			d := got.r.Decision
			if got.err != nil || d.Allowed || d.Limit.Name() != "conc" || d.Remaining != 0 || d.RetryAfter != time.Second ||
				d.ResetAfter != 0 || !d.Cached || d.Receipt != nil || d.States != nil || s.n.Load() != calls {
				t.Fatalf("%s: %+v, %v; want the InFlight denial (Retry-After 1 s, Cached) and no store call", step, d, got.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no answer from Reserve in 5 s", step)
		}
	}

	o1, c1 := atStore("1st")
	o2, c2 := atStore("2nd")
	o3, c3 := atStore("3rd")
	refused("3 calls under way")
	r1 := admit(o1, c1)
	c2 <- errors.New("ratekit: test: store down")
	if got := <-o2; got.err == nil || got.r != nil {
		t.Fatalf("a failed Reserve: %v, %v", got.r, got.err)
	}
	o4, c4 := atStore("after a failed Reserve")
	refused("2 held, 1 under way")
	r3, r4 := admit(o3, c3), admit(o4, c4)
	refused("3 held")
	if err := r1.Settle(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r5 := admit(atStore("after Settle"))
	refused("3 held after Settle")
	if err := r3.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r6 := admit(atStore("after Release"))
	refused("3 held after Release")
	for _, r := range []*ratekit.Reservation{r4, r5, r6} {
		if err := r.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.GateEntries(); n != 0 {
		t.Fatalf("%d subjects counted with none in flight; want 0", n)
	}

	// Another instance holds every slot: the store denies, and each denial
	// gives its place back, so the 4th call asks the store too.
	other, err := ratekit.New(s.Store, ratekit.InFlight(3).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if r, err := other.Reserve(ctx, "a", 1); err != nil || !r.Decision.Allowed {
			t.Fatalf("other instance: %+v, %v", r.Decision, err)
		}
	}
	for i := range 4 {
		out, reply := atStore("denied by the store")
		reply <- nil
		if got := <-out; got.err != nil || got.r.Decision.Allowed || got.r.Decision.Cached {
			t.Fatalf("call %d with the slots held elsewhere: %+v, %v; want the store's denial", i, got.r.Decision, got.err)
		}
	}
	if n, want := s.n.Load(), int64(3+1+1+1+4); n != want || l.GateEntries() != 0 {
		t.Fatalf("%d store calls, %d subjects counted; want %d and 0", n, l.GateEntries(), want)
	}
}

// reserveCounter is a memstore whose Reserve calls are counted.
type reserveCounter struct {
	*memstore.Store
	n atomic.Int64
}

func (s *reserveCounter) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s *reserveCounter) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	s.n.Add(1)
	return storetest.Reserve(ctx, s.Store, key, limits, cost)
}

// TestInFlightLocalRefusalResponse: through Middleware, a request refused
// locally gets the response of a request the store refuses (status,
// headers, body) without a store call; with a window limit beside the
// InFlight one, RateLimit describes the InFlight limit alone, whose state
// the instance knows.
func TestInFlightLocalRefusalResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits []ratekit.Limit
		want   string // the local refusal's RateLimit
	}{
		{"inflight", []ratekit.Limit{ratekit.InFlight(2).Named("conc")}, `"conc";r=0`},
		{"inflight+window", []ratekit.Limit{ratekit.FixedWindow(100, time.Minute).Named("api"), ratekit.InFlight(2).Named("conc")}, `"conc";r=0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memstore.New()
			s := &reserveCounter{Store: mem}
			here, err := ratekit.New(s, tc.limits...)
			if err != nil {
				t.Fatal(err)
			}
			other, err := ratekit.New(mem, tc.limits...)
			if err != nil {
				t.Fatal(err)
			}
			clock := ratekit.WithHeaderClock(func() time.Time { return time.Unix(1_700_000_000, 0) })
			mw := ratekit.Middleware(here, ratekit.ByHeader("X-Key"), clock)
			send := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.Header.Set("X-Key", "a")
				rec := httptest.NewRecorder()
				mw(ok).ServeHTTP(rec, req)
				return rec
			}
			// the store refuses: another instance holds both slots
			var held []*ratekit.Reservation
			for range 2 {
				r, err := other.Reserve(context.Background(), "a", 1)
				if err != nil || !r.Decision.Allowed {
					t.Fatalf("other instance: %+v, %v", r.Decision, err)
				}
				held = append(held, r)
			}
			byStore := send()
			for _, r := range held {
				_ = r.Release(context.Background())
			}
			// refused here: this instance holds both slots
			for range 2 {
				if r, err := here.Reserve(context.Background(), "a", 1); err != nil || !r.Decision.Allowed {
					t.Fatalf("this instance: %+v, %v", r.Decision, err)
				}
			}
			calls := s.n.Load()
			local := send()
			if s.n.Load() != calls {
				t.Fatalf("the local refusal made %d store calls; want 0", s.n.Load()-calls)
			}
			if local.Code != http.StatusTooManyRequests || local.Body.String() != byStore.Body.String() {
				t.Fatalf("local refusal %d %q; the store's %d %q", local.Code, local.Body, byStore.Code, byStore.Body)
			}
			for _, h := range []string{"Retry-After", "Cache-Control", "Content-Type", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Ratelimit-Policy"} {
				if got, want := local.Header().Get(h), byStore.Header().Get(h); got != want || want == "" {
					t.Errorf("%s: %q locally, %q from the store", h, got, want)
				}
			}
			if got := local.Header().Get("Ratelimit"); got != tc.want {
				t.Errorf("RateLimit: %q locally (the store's: %q); want %q", got, byStore.Header().Get("Ratelimit"), tc.want)
			}
		})
	}
}
