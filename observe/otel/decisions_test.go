package ratekitotel_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestDeniedAfterQuota: quota 3, five requests: three allowed, two denied,
// one near limit (the third leaves 0 of 3), five store latencies.
func TestDeniedAfterQuota(t *testing.T) {
	m, reader := newMetrics(t)
	h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(3, time.Minute).Named("api")),
		ratekit.ByIP(), ratekit.WithObserver(m))(okHandler)
	if got := send(h, 5); got[200] != 3 || got[429] != 2 {
		t.Fatalf("statuses %v, want 3×200 and 2×429", got)
	}
	check(t, reader, want(0, policy("api", counts{allowed: 3, denied: 2, near: 1, latency: 5})))
}

// TestShadowOnly: a shadow limit of 10 refuses nothing; of 100 requests it
// counts 10 allowed and 90 shadow_denied. Near limit: the allowed requests
// that leave 2, 1 and 0 of 10.
func TestShadowOnly(t *testing.T) {
	m, reader := newMetrics(t)
	h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(10, time.Minute).Named("new").Shadow()),
		ratekit.ByIP(), ratekit.WithObserver(m))(okHandler)
	if got := send(h, 100); got[200] != 100 {
		t.Fatalf("statuses %v, want 100×200", got)
	}
	check(t, reader, want(0, policy("new", counts{allowed: 10, shadowDenied: 90, near: 3, latency: 100})))
}

// TestShadowBesideEnforced: the policy label follows the binding limit. With
// "api" (5, enforced) and "new" (2, shadow), requests 1-2 pass both (api
// binds), 3-5 pass api but not new (shadow_denied, new binds), 6-7 are
// denied by api (new is not asked).
func TestShadowBesideEnforced(t *testing.T) {
	m, reader := newMetrics(t)
	l := limiter(t, memstore.New(), ratekit.FixedWindow(5, time.Minute).Named("api"),
		ratekit.FixedWindow(2, time.Minute).Named("new").Shadow())
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(m))(okHandler)
	if got := send(h, 7); got[200] != 5 || got[429] != 2 {
		t.Fatalf("statuses %v, want 5×200 and 2×429", got)
	}
	check(t, reader, want(0,
		policy("api", counts{allowed: 2, denied: 2, latency: 4}),
		policy("new", counts{shadowDenied: 3, latency: 3})))
}

// TestStoreError: a failing store gives outcome error and a store error;
// the request passes (fail-open by default) and its latency is recorded.
// Errors carry the names of all the call's limits.
func TestStoreError(t *testing.T) {
	m, reader := newMetrics(t)
	l := limiter(t, failingStore{}, ratekit.FixedWindow(3, time.Minute).Named("a"), ratekit.GCRA(1, time.Second, 1).Named("b"))
	var reported []error
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(m),
		ratekit.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))(okHandler)
	if got := send(h, 1); got[200] != 1 {
		t.Fatalf("statuses %v, want 200 (fail-open)", got)
	}
	if len(reported) != 1 || !errors.Is(reported[0], errDown) {
		t.Fatalf("error handler got %v", reported)
	}
	check(t, reader, want(0, policy("a,b", counts{errors: 1, latency: 1})))
}

// TestInvalidKey: a key function that fails gives outcome invalid, 400 by
// default, and no latency: no store was asked.
func TestInvalidKey(t *testing.T) {
	m, reader := newMetrics(t)
	noKey := ratekit.KeyFunc(func(*http.Request) (string, error) { return "", errors.New("no key") })
	h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(3, time.Minute).Named("api")),
		noKey, ratekit.WithObserver(m))(okHandler)
	if got := send(h, 2); got[400] != 2 {
		t.Fatalf("statuses %v, want 2×400", got)
	}
	check(t, reader, want(0, policy("api", counts{invalid: 2})))
}

// TestNearLimit: an allowed call is near its limit when what it leaves is
// at most a fifth of the quota (Event.NearLimit). With quota 10, the calls
// that leave 2, 1 and 0 count; denials never do.
func TestNearLimit(t *testing.T) {
	for _, c := range []struct {
		name                  string
		quota, cost           int64
		requests              int
		allowed, denied, near int
	}{
		{"cost 1", 10, 1, 12, 10, 2, 3}, // leaves 9..0: 2, 1, 0 count
		{"cost 2", 10, 2, 7, 5, 2, 2},   // leaves 8, 6, 4, 2, 0: 2 and 0 count
		{"cost 3", 10, 3, 4, 3, 1, 1},   // leaves 7, 4, 1: 1 counts; 3 > 1 left is denied
		{"quota 4", 4, 1, 4, 4, 0, 1},   // a fifth of 4 is 0.8: only the call leaving 0 counts
	} {
		t.Run(c.name, func(t *testing.T) {
			m, reader := newMetrics(t)
			h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(c.quota, time.Minute).Named("api")),
				ratekit.ByIP(), ratekit.WithCost(c.cost), ratekit.WithObserver(m))(okHandler)
			if got := send(h, c.requests); got[200] != c.allowed || got[429] != c.denied {
				t.Fatalf("statuses %v, want %d×200 and %d×429", got, c.allowed, c.denied)
			}
			check(t, reader, want(0, policy("api", counts{allowed: c.allowed, denied: c.denied, near: c.near, latency: c.requests})))
		})
	}
}

// TestFallback: decisions of a fallback store count as fallback decisions
// (denials too) and set fallback_active to 1; store errors and invalid
// requests leave it; the next decision of a primary store sets it to 0.
func TestFallback(t *testing.T) {
	m, reader := newMetrics(t)
	opt := ratekit.WithObserver(m)
	local := limiter(t, fallbackStore{memstore.New()}, ratekit.FixedWindow(2, time.Minute).Named("local"))
	primary := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(9, time.Minute).Named("api")), ratekit.ByIP(), opt)(okHandler)
	fallback := ratekit.Middleware(local, ratekit.ByIP(), opt)(okHandler)
	broken := ratekit.Middleware(limiter(t, failingStore{}, ratekit.FixedWindow(9, time.Minute).Named("down")), ratekit.ByIP(), opt)(okHandler)
	invalid := ratekit.Middleware(local, ratekit.ByHeader("X-Api-Key"), opt)(okHandler)

	check(t, reader, want(0))
	if got := send(fallback, 3); got[200] != 2 || got[429] != 1 {
		t.Fatalf("statuses %v, want 2×200 and 1×429", got)
	}
	localCounts := counts{allowed: 2, denied: 1, near: 1, fallback: 3, latency: 3}
	check(t, reader, want(1, policy("local", localCounts)))

	send(broken, 1)
	send(invalid, 1) // no X-Api-Key
	localCounts.invalid = 1
	downCounts := counts{errors: 1, latency: 1}
	check(t, reader, want(1, policy("local", localCounts), policy("down", downCounts)))

	send(primary, 1)
	apiCounts := counts{allowed: 1, latency: 1}
	check(t, reader, want(0, policy("local", localCounts), policy("down", downCounts), policy("api", apiCounts)))
}
