package lockout_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestPasswordSpraying: one password tried against 200 accounts from 200
// addresses passes the per-account and per-IP lockouts, and is refused by
// the per-password one after its 20 failures; other passwords, and the
// account owners, are not.
func TestPasswordSpraying(t *testing.T) {
	clock := start()
	s := memstore.New(memstore.WithClock(clock.Now))
	newLO := func(name string, attempts int64) *lockout.Lockout {
		lo, err := lockout.New(s, lockout.Config{Name: name, Windows: []lockout.Window{
			{Scope: name, Attempts: attempts, Window: time.Hour, Block: time.Hour}}})
		if err != nil {
			t.Fatal(err)
		}
		return lo
	}
	account, perIP, perPassword := newLO("login", 5), newLO("login-ip", 50), newLO("login-password", 20)
	secret := []byte("spraying secret: 32 bytes or more, random in real use")
	var checked atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checked.Add(1)
		if r.PostFormValue("password") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("welcome"))
	})
	h := perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess())(
		perPassword.Middleware(lockout.KeyedHash(secret, bodykey.FormValue("password", bodykey.Exact())), lockout.KeepOnSuccess())(
			account.Middleware(bodykey.FormValue("username"))(handler)))
	try := func(user, password string, ip int) int {
		r := login(user, password)
		r.RemoteAddr = fmt.Sprintf("198.51.100.%d:4000", ip%250)
		if ip >= 250 {
			r.RemoteAddr = fmt.Sprintf("203.0.113.%d:4000", ip-250)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	var passed, refused int
	for i := range 200 {
		switch code := try(fmt.Sprintf("user%03d", i), "Summer2026!", i); code {
		case 401:
			passed++
		case 429:
			refused++
		default:
			t.Fatalf("attempt %d: %d", i+1, code)
		}
	}
	if passed != 20 || refused != 180 || checked.Load() != 20 {
		t.Fatalf("sprayed: %d reached the password check, %d refused (handler ran %d times); want 20, 180", passed, refused, checked.Load())
	}
	if code := try("user000", "another guess", 300); code != 401 {
		t.Fatalf("another password: %d, want 401", code)
	}
	if code := try("user001", "right", 301); code != 200 {
		t.Fatalf("the owner: %d, want 200", code)
	}
	clock.Advance(time.Hour)
	if code := try("user002", "Summer2026!", 302); code != 401 {
		t.Fatalf("an hour later: %d, want 401", code)
	}
	// The store holds no password: only the keyed hash.
	if d, _ := perPassword.Check(context.Background(), "Summer2026!"); d.Counts[0] != 0 {
		t.Fatalf("counted under the password itself: %+v", d)
	}
}

// TestDeviceAttemptIsOneCall: an attempt with a trusted device cookie is
// one store call; a failure keeps it, a success gives it back in one more,
// as an attempt without a cookie is one call and a success resets in one.
func TestDeviceAttemptIsOneCall(t *testing.T) {
	clock := start()
	s := &countingStore{Store: memstore.New(memstore.WithClock(clock.Now))}
	lo := devicesLockout(t, s, clock, keyA)
	var checked atomic.Int64
	h := loginServer(lo, &checked)
	c := deviceCookie(post(h, "alice", "right"))
	for _, step := range []struct {
		name     string
		password string
		cookie   *http.Cookie
		calls    int64
	}{
		{"failure with the cookie", "guess", c, 1},
		{"success with the cookie", "right", c, 2},
		{"failure without", "guess", nil, 1},
	} {
		before := s.calls.Load()
		var cs []*http.Cookie
		if step.cookie != nil {
			cs = append(cs, step.cookie)
		}
		post(h, "alice", step.password, cs...)
		if got := s.calls.Load() - before; got != step.calls {
			t.Fatalf("%s: %d store calls, want %d", step.name, got, step.calls)
		}
	}
}

// countingStore counts the calls that reach a memstore.
type countingStore struct {
	*memstore.Store
	calls atomic.Int64
}

func (s *countingStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s *countingStore) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	s.calls.Add(1)
	return storetest.Take(ctx, s.Store, key, limits, cost)
}

func (s *countingStore) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	s.calls.Add(1)
	return storetest.Peek(ctx, s.Store, key, limits)
}

func (s *countingStore) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	s.calls.Add(1)
	return storetest.Reset(ctx, s.Store, key, limits)
}

func (s *countingStore) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	s.calls.Add(1)
	return storetest.Reserve(ctx, s.Store, key, limits, cost)
}

func (s *countingStore) Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	s.calls.Add(1)
	return storetest.Settle(ctx, s.Store, key, limits, r, cost)
}
