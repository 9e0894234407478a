package lockout_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

func newLockout(t *testing.T, s lockout.Store, failOpen bool) *lockout.Lockout {
	t.Helper()
	lo, err := lockout.New(s, lockout.Config{Name: "login", FailOpen: failOpen, Windows: []lockout.Window{
		{Scope: "temp", Attempts: 3, Window: time.Minute, Block: 15 * time.Minute},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return lo
}

// TestEnforceResponse writes the wrapper's error over HTTP: status, headers
// and body.
func TestEnforceResponse(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	lo := newLockout(t, memstore.New(memstore.WithClock(clock.Now)), false)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := lo.Enforce(r.Context(), "alice"); err != nil {
			var e *ratekit.ErrorResponse
			if !errors.As(err, &e) {
				t.Errorf("Enforce returned %T", err)
			}
			e.ServeHTTP(w, r)
			return
		}
		io.WriteString(w, "checked")
	}))
	t.Cleanup(srv.Close)
	for i := range 3 {
		if r := get(t, srv.URL); r.status != 200 || r.body != "checked" {
			t.Fatalf("attempt %d: %d %q", i+1, r.status, r.body)
		}
	}
	clock.Advance(30 * time.Second)
	r := get(t, srv.URL)
	want := `{"status":429,"code":"TOO_MANY_ATTEMPTS","message":"Too many attempts. Try again in 900 seconds.","context":{"retryAfter":900,"limit":3,"remaining":0,"policy":"temp"}}`
	if r.status != 429 || r.body != want || r.header.Get("Retry-After") != "900" ||
		r.header.Get("Cache-Control") != "no-store" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("blocked: %d %v %s", r.status, r.header, r.body)
	}
	clock.Advance(5 * time.Minute)
	if r := get(t, srv.URL); r.status != 429 || r.header.Get("Retry-After") != "600" {
		t.Fatalf("5 min into the block: %d Retry-After %s", r.status, r.header.Get("Retry-After"))
	}
}

// downLockout fails every call, as an unreachable store does.
type downLockout struct{}

func (downLockout) Lockout(context.Context, string, *lockout.Policy, lockout.Op, string) (lockout.Decision, error) {
	return lockout.Decision{}, errors.New("dial tcp: secret")
}

// TestLockoutFailsClosed: with the store down a lockout answers 503 unless
// it is FailOpen.
func TestLockoutFailsClosed(t *testing.T) {
	var e *ratekit.ErrorResponse
	if err := newLockout(t, downLockout{}, false).Enforce(context.Background(), "alice"); !errors.As(err, &e) || e.Status != 503 || strings.Contains(e.Message, "secret") {
		t.Fatalf("store down: %v", err)
	}
	if err := newLockout(t, downLockout{}, true).Enforce(context.Background(), "alice"); err != nil {
		t.Fatalf("store down, FailOpen: %v", err)
	}
	h := newLockout(t, downLockout{}, false).Middleware(ratekit.ByFormValue("username"))(ok)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, login("alice", "x"))
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("middleware, store down: %d", rec.Code)
	}
}

func login(user, password string) *http.Request {
	form := url.Values{"username": {user}, "password": {password}}
	r := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

// TestFailureOnlyCounting: per account and per IP, failures count,
// successes reset only their own account.
func TestFailureOnlyCounting(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	store := memstore.New(memstore.WithClock(clock.Now))
	perAccount := newLockout(t, store, false)
	perIP, err := lockout.New(store, lockout.Config{Name: "login-ip", Windows: []lockout.Window{
		{Scope: "ip", Attempts: 20, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.FormValue("password") != "right" {
			http.Error(w, "wrong credentials", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "welcome")
	})
	h := perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess())(perAccount.Middleware(ratekit.ByFormValue("username"))(handler))
	do := func(user, password string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, login(user, password))
		return rec.Code
	}

	for i := range 100 {
		if code := do("alice", "right"); code != 200 {
			t.Fatalf("success %d: %d", i+1, code)
		}
	}
	for i := range 2 {
		if code := do("bob", "wrong"); code != 401 {
			t.Fatalf("bob's failure %d: %d", i+1, code)
		}
	}
	if code := do("alice", "right"); code != 200 { // a success for alice ...
		t.Fatalf("alice: %d", code)
	}
	if code := do(" BOB", "wrong"); code != 401 { // ... leaves bob's 2 failures; this is his 3rd
		t.Fatalf("bob's 3rd failure: %d", code)
	}
	before := calls
	if code := do("bob", "right"); code != 429 || calls != before {
		t.Fatalf("bob's 4th attempt (3 allowed): %d, handler ran %d times; want 429 before the handler", code, calls-before)
	}
	if code := do("alice", "right"); code != 200 {
		t.Fatalf("alice while bob is blocked: %d", code)
	}
	// the per-IP lockout counts failures only: bob's 3, not alice's 102 successes
	d, err := perIP.Check(context.Background(), "192.0.2.1")
	if err != nil || !d.Allowed || d.Counts[0] != 3 {
		t.Fatalf("per-IP counter: %+v %v, want the 3 failures", d, err)
	}
	if code := do("", "x"); code != 400 {
		t.Fatalf("no username: %d, want 400", code)
	}
}

// TestParallelGuesses: 100 concurrent wrong passwords for one account reach
// the handler exactly as often as the lockout allows.
func TestParallelGuesses(t *testing.T) {
	lo := newLockout(t, memstore.New(), false)
	var mu sync.Mutex
	calls := 0
	h := lo.Middleware(ratekit.ByFormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(httptest.NewRecorder(), login("carol", "guess"))
		}()
	}
	wg.Wait()
	if calls != 3 {
		t.Fatalf("the handler checked %d passwords, want exactly 3", calls)
	}
}

// TestOtherStatusesRefund: a response that is neither a failure nor a
// success (a 400 from the handler) does not count.
func TestOtherStatusesRefund(t *testing.T) {
	lo := newLockout(t, memstore.New(), false)
	h := lo.Middleware(ratekit.ByFormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
	}))
	for range 10 {
		h.ServeHTTP(httptest.NewRecorder(), login("dave", "x"))
	}
	if d, _ := lo.Check(context.Background(), "dave"); !d.Allowed || d.Counts[0] != 0 {
		t.Fatalf("after 10 requests answered 400: %+v, want nothing counted", d)
	}
}
