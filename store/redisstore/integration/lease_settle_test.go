package integration_test

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
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/redisstore"
)

// userRequest serves one request with X-User: user through h and returns
// its status.
func userRequest(h http.Handler, user string) int {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("X-User", user)
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestLeaseSettlesOtherLimits: on real Redis, a lease store leases the
// rate and passes the calls of other limits to the Redis store. A second
// Limiter on it with InFlight(3) lets exactly 3 of 12 requests sent at
// once into the handler, twice (the slots come back); Middleware's
// WithSettle settles a reserved charge of 100 to 30 in Redis; a Limiter
// with the leased rate and an InFlight limit is refused when it is built,
// and so is WithSettle on the rate's Limiter.
func TestLeaseSettlesOtherLimits(t *testing.T) {
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	rate := ratekit.FixedWindow(1000, time.Minute).Named("rate")
	ls := leaseStore(t, srv.NewClient(nil), prefix, []ratekit.Limit{rate}, lease.WithMaxLease(10))
	admin := srv.NewClient(nil)
	t.Cleanup(func() { admin.Close() })
	rs, err := redisstore.New(admin, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	fail := ratekit.WithErrorHandler(func(_ *http.Request, err error) { t.Errorf("store error: %v", err) })
	key := ratekit.ByHeader("X-User")
	rateL, err := ratekit.New(ls, rate)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := ratekit.New(ls, ratekit.InFlight(3).Named("slots"))
	if err != nil {
		t.Fatalf("an InFlight limit beside a leased one: %v", err)
	}
	ctx := context.Background()
	for round := range 2 {
		release := make(chan struct{})
		entered := make(chan struct{}, 12)
		h := ratekit.Middleware(rateL, key, fail)(ratekit.Middleware(slots, key, fail)(
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
				codes <- userRequest(h, "u")
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
		if in != 3 || refused != 9 {
			t.Fatalf("round %d: %d in the handler at once, %d refused; want 3 and 9", round, in, refused)
		}
		if d, err := storetest.Peek(ctx, rs, "u", []ratekit.Limit{ratekit.InFlight(3).Named("slots")}); err != nil || d.Remaining != 3 {
			t.Fatalf("round %d: after the requests ended, Redis says %+v, %v; want 3 slots free", round, d, err)
		}
	}
	if got := ls.Stats().Spent(); got != 24 {
		t.Fatalf("the leased rate admitted %d requests, want 24", got)
	}

	tokens := ratekit.FixedWindow(1000, time.Hour).Named("tokens")
	tokensL, err := ratekit.New(ls, tokens)
	if err != nil {
		t.Fatal(err)
	}
	settled := ratekit.Middleware(tokensL, key, ratekit.WithCost(100), ratekit.WithSettle(), fail)(
		http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), 30); err != nil {
				t.Errorf("Settle: %v", err)
			}
		}))
	if c := userRequest(settled, "u"); c != http.StatusOK {
		t.Fatalf("settled request: %d", c)
	}
	if d, err := storetest.Peek(ctx, rs, "u", []ratekit.Limit{tokens}); err != nil || d.Remaining != 970 {
		t.Fatalf("reserved 100, settled 30: Redis says %+v, %v; want 970 remaining", d, err)
	}

	const want = "cannot settle"
	if _, err := ratekit.New(ls, rate, ratekit.InFlight(3).Named("slots")); !errors.Is(err, ratekit.ErrInvalidLimit) || !strings.Contains(err.Error(), want) {
		t.Fatalf("New with the leased rate and an InFlight limit: %v; want ErrInvalidLimit saying %q", err, want)
	}
	func() {
		defer func() {
			if msg, _ := recover().(string); !strings.Contains(msg, want) {
				t.Errorf("WithSettle on the leased rate: panic %q; want one saying %q", msg, want)
			}
		}()
		ratekit.Middleware(rateL, key, ratekit.WithSettle())
	}()
}
