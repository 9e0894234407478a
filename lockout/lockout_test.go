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
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

func newLockout(t *testing.T, s ratekit.Store, failOpen bool) *lockout.Lockout {
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
			var e *response.Error
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

// TestLockoutFailsClosed: with the store down a lockout answers 503 unless
// it is FailOpen.
func TestLockoutFailsClosed(t *testing.T) {
	var e *response.Error
	if err := newLockout(t, downStore{memstore.New()}, false).Enforce(context.Background(), "alice"); !errors.As(err, &e) || e.Status != 503 || strings.Contains(e.Message, "secret") {
		t.Fatalf("store down: %v", err)
	}
	if err := newLockout(t, downStore{memstore.New()}, true).Enforce(context.Background(), "alice"); err != nil {
		t.Fatalf("store down, FailOpen: %v", err)
	}
	h := newLockout(t, downStore{memstore.New()}, false).Middleware(bodykey.FormValue("username"))(ok)
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
	h := perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess())(perAccount.Middleware(bodykey.FormValue("username"))(handler))
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
	h := lo.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	h := lo.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
	}))
	for range 10 {
		h.ServeHTTP(httptest.NewRecorder(), login("dave", "x"))
	}
	if d, _ := lo.Check(context.Background(), "dave"); !d.Allowed || d.Counts[0] != 0 {
		t.Fatalf("after 10 requests answered 400: %+v, want nothing counted", d)
	}
}

// TestRetryAfterWaitsForTheLog: a block shorter than its window answers
// with the time until the log has room, from the block's start to its end,
// and an attempt at that time passes.
func TestRetryAfterWaitsForTheLog(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := storetest.NewClock(start)
	lo, err := lockout.New(memstore.New(memstore.WithClock(clock.Now)), lockout.Config{Name: "verify", Windows: []lockout.Window{
		{Scope: "code", Attempts: 3, Window: 10 * time.Minute, Block: time.Minute},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := func(d time.Duration) { clock.Advance(start.Add(d).Sub(clock.Now())) }
	for i := range 3 { // at 0, 1 and 2 min: the first leaves the log at 10 min
		at(time.Duration(i) * time.Minute)
		if d, err := lo.Attempt(ctx, "alice"); err != nil || !d.Allowed || d.Counts[0] != int64(i+1) {
			t.Fatalf("attempt %d: %+v %v", i+1, d, err)
		}
	}
	for _, s := range []struct{ at, retry time.Duration }{
		{3 * time.Minute, 7 * time.Minute},                               // the block starts: 1 min
		{3*time.Minute + 30*time.Second, 6*time.Minute + 30*time.Second}, // in the block
		{5 * time.Minute, 5 * time.Minute},                               // past the block (it ended at 4 min): the full log starts it again
	} {
		at(s.at)
		d, err := lo.Attempt(ctx, "alice")
		if err != nil || d.Allowed || d.Scope != "code" || d.Limit != 3 || d.RetryAfter != s.retry {
			t.Fatalf("at %s: %+v %v, want denied by code, Retry-After %s", s.at, d, err, s.retry)
		}
	}
	at(10*time.Minute - time.Millisecond)
	if d, _ := lo.Check(ctx, "alice"); d.Allowed {
		t.Fatalf("1 ms before the Retry-After: %+v", d)
	}
	at(10 * time.Minute)
	if d, err := lo.Attempt(ctx, "alice"); err != nil || !d.Allowed || d.Counts[0] != 3 {
		t.Fatalf("at the Retry-After: %+v %v, want allowed, 3 counted", d, err)
	}
}

// TestLockoutsKeepApart: two lockouts with alike windows on one store count
// apart, and Reset clears one only.
func TestLockoutsKeepApart(t *testing.T) {
	s := memstore.New()
	windows := []lockout.Window{{Scope: "temp", Attempts: 1, Window: time.Hour, Block: time.Hour}}
	login, err := lockout.New(s, lockout.Config{Name: "login", Windows: windows})
	if err != nil {
		t.Fatal(err)
	}
	verify, err := lockout.New(s, lockout.Config{Name: "verify", Windows: windows})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, lo := range []*lockout.Lockout{login, verify} {
		if d, err := lo.Attempt(ctx, "alice"); err != nil || !d.Allowed {
			t.Fatalf("first attempt: %+v %v", d, err)
		}
	}
	if err := login.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if d, _ := login.Attempt(ctx, "alice"); !d.Allowed {
		t.Fatalf("login after its Reset: %+v", d)
	}
	if d, _ := verify.Attempt(ctx, "alice"); d.Allowed || d.RetryAfter != time.Hour {
		t.Fatalf("verify's second attempt: %+v, want blocked for 1h", d)
	}
}

// TestNewRefuses: New reports every problem at once, each saying how to fix
// it, as errors matching ratekit.ErrInvalidLimit.
func TestNewRefuses(t *testing.T) {
	_, err := lockout.New(takeOnly{}, lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 0, Window: time.Minute, Block: time.Minute},
		{Scope: "temp", Attempts: 5, Window: time.Hour, Block: 1500 * time.Microsecond},
	}})
	want := []string{
		`ratekit: invalid limit "login": store (lockout_test.takeOnly) cannot refund attempts; pass memstore.New(), a Redis store or a wrapper of them`,
		`ratekit: invalid limit "login": window 1 attempts must be between 1 and 10000 (got 0)`,
		`ratekit: invalid limit "login": window 2 scope "temp" names an earlier window too; give each window a scope of its own`,
		`ratekit: invalid limit "login": window 2 block must be whole milliseconds from 1ms to 8784h0m0s (got 1.5ms)`,
	}
	if !errors.Is(err, ratekit.ErrInvalidLimit) || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("New: %v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// takeOnly is a ratekit.Store whose prepared forms cannot settle.
type takeOnly struct{}

func (takeOnly) Prepare([]ratekit.Limit) (ratekit.Prepared, error) {
	return struct{ ratekit.Prepared }{}, nil
}
