package lockout_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

var (
	keyA = []byte("device key A: 32 bytes or more, random in real use")
	keyB = []byte("device key B: 32 bytes or more, random in real use")
)

// devicesLockout is the login lockout of the device tests: 5 failures in
// 15 minutes block the account for 15 minutes; a trusted device may fail 3
// times a day.
func devicesLockout(t *testing.T, s ratekit.Store, clock *storetest.Clock, keys ...[]byte) *lockout.Lockout {
	t.Helper()
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute},
	}, Devices: &lockout.Devices{Keys: keys, Failures: 3, MaxDevices: 2}})
	if err != nil {
		t.Fatal(err)
	}
	lockout.SetClock(lo, clock.Now)
	return lo
}

// loginServer is the handler of the device tests: POST /login with
// username and password, "right" being every account's password, behind lo's
// Middleware; a right one is LoggedIn.
func loginServer(lo *lockout.Lockout, checked *atomic.Int64) http.Handler {
	return lo.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checked.Add(1)
		if r.FormValue("password") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		err := lockout.LoggedIn(r.Context(), strings.ToLower(strings.TrimSpace(r.FormValue("username"))))
		if err != nil && !errors.Is(err, lockout.ErrTooManyDevices) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write([]byte("welcome"))
	}))
}

// post sends a login through h with the given cookies.
func post(h http.Handler, user, password string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := login(user, password)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// deviceCookie returns the device cookie rec sets, nil when none.
func deviceCookie(rec *httptest.ResponseRecorder) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if strings.HasPrefix(c.Name, "__Host-ratekit-device-") {
			return c
		}
	}
	return nil
}

func start() *storetest.Clock {
	return storetest.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
}

// TestTrustedDeviceOutlastsTheLockout: the owner's device cookie, set by a
// successful login, lets the owner in while failures from elsewhere keep
// the account locked for everyone else.
func TestTrustedDeviceOutlastsTheLockout(t *testing.T) {
	clock := start()
	lo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyA)
	var checked atomic.Int64
	h := loginServer(lo, &checked)

	rec := post(h, "alice", "right")
	c := deviceCookie(rec)
	if rec.Code != 200 || c == nil {
		t.Fatalf("first login: %d, cookie %v", rec.Code, c)
	}
	if c.Name != lo.CookieName("alice") || !strings.HasPrefix(c.Name, "__Host-ratekit-device-") || len(c.Name) != 33 ||
		!c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" ||
		!c.Expires.Equal(clock.Now().Add(30*24*time.Hour)) {
		t.Fatalf("cookie attributes: %+v", c)
	}
	for i := range 5 {
		if code := post(h, "alice", "guess").Code; code != 401 {
			t.Fatalf("attacker's failure %d: %d", i+1, code)
		}
	}
	if rec := post(h, "alice", "right"); rec.Code != 429 || rec.Header().Get("Retry-After") != "900" {
		t.Fatalf("alice without her cookie: %d, want 429 (Retry-After 900)", rec.Code)
	}
	for i := range 3 {
		rec := post(h, "alice", "right", c)
		if rec.Code != 200 || deviceCookie(rec) != nil {
			t.Fatalf("alice with her cookie, login %d: %d, cookie %v; want 200 and no new cookie", i+1, rec.Code, deviceCookie(rec))
		}
	}
	if code := post(h, "alice", "right").Code; code != 429 { // her successes left the lockout in force
		t.Fatalf("without the cookie after her logins: %d, want 429", code)
	}
	for i := range 5 {
		post(h, "bob", "guess")
		if i == 4 && post(h, "bob", "right").Code != 429 {
			t.Fatal("bob after 5 failures: not locked")
		}
	}
	asBob := &http.Cookie{Name: lo.CookieName("bob"), Value: c.Value} // alice's token under bob's name
	if code := post(h, "bob", "right", asBob, c).Code; code != 429 {
		t.Fatalf("bob, locked, with alice's token: %d, want 429", code)
	}
	// Several accounts on one browser: each its own cookie.
	if rec := post(h, "carol", "right", c); rec.Code != 200 || deviceCookie(rec) == nil || deviceCookie(rec).Name == c.Name {
		t.Fatalf("carol on alice's browser: %d, cookie %v; want a cookie of her own", rec.Code, deviceCookie(rec))
	}
}

// TestDeviceLosesItsCookie: a trusted device may fail Failures times; the
// next attempt revokes its token (the cookie is deleted) and counts as an
// attempt without one; the token is never trusted again.
func TestDeviceLosesItsCookie(t *testing.T) {
	clock := start()
	lo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyA)
	var checked atomic.Int64
	h := loginServer(lo, &checked)
	c := deviceCookie(post(h, "alice", "right"))
	ctx := context.Background()
	for i := range 3 {
		d, err := lo.AttemptDevice(ctx, "alice", c.Value)
		if err != nil || !d.Allowed || !d.Trusted {
			t.Fatalf("device failure %d: %+v %v", i+1, d, err)
		}
	}
	rec := post(h, "alice", "guess", c)
	gone := deviceCookie(rec)
	if rec.Code != 401 || gone == nil || gone.MaxAge >= 0 || gone.Value != "" {
		t.Fatalf("the 4th failure: %d, cookie %+v; want 401 and the cookie deleted", rec.Code, gone)
	}
	if d, _ := lo.Check(ctx, "alice"); d.Counts[0] != 1 {
		t.Fatalf("the account's windows: %+v, want the revoking attempt counted there", d)
	}
	clock.Advance(29 * 24 * time.Hour) // the revocation lasts the token's lifetime
	d, err := lo.AttemptDevice(ctx, "alice", c.Value)
	if err != nil || d.Trusted || !d.Revoked {
		t.Fatalf("29 days later: %+v %v, want untrusted and revoked", d, err)
	}
}

// TestRevokeDevices: after RevokeDevices no earlier token is trusted, and a
// later login is trusted again.
func TestRevokeDevices(t *testing.T) {
	clock := start()
	lo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyA)
	var checked atomic.Int64
	h := loginServer(lo, &checked)
	laptop, phone := deviceCookie(post(h, "alice", "right")), deviceCookie(post(h, "alice", "right"))
	if laptop == nil || phone == nil || laptop.Value == phone.Value {
		t.Fatalf("two logins: %v %v, want two cookies", laptop, phone)
	}
	ctx := context.Background()
	if err := lo.RevokeDevices(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*http.Cookie{laptop, phone} {
		if d, err := lo.AttemptDevice(ctx, "alice", c.Value); err != nil || d.Trusted || !d.Revoked {
			t.Fatalf("a token after RevokeDevices: %+v %v", d, err)
		}
	}
	if err := lo.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	tablet := deviceCookie(post(h, "alice", "right"))
	if d, err := lo.AttemptDevice(ctx, "alice", tablet.Value); tablet == nil || err != nil || !d.Trusted {
		t.Fatalf("a token after the revocation: %+v %v", d, err)
	}
}

// TestMaxDevices: an account gets MaxDevices trusted devices; a login
// beyond them gets none until one is revoked.
func TestMaxDevices(t *testing.T) {
	clock := start()
	lo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyA)
	ctx := context.Background()
	for i := range 2 {
		if _, _, err := lo.TrustDevice(ctx, "alice"); err != nil {
			t.Fatalf("device %d: %v", i+1, err)
		}
	}
	if _, _, err := lo.TrustDevice(ctx, "alice"); !errors.Is(err, lockout.ErrTooManyDevices) {
		t.Fatalf("a 3rd device: %v, want ErrTooManyDevices", err)
	}
	var checked atomic.Int64
	if rec := post(loginServer(lo, &checked), "alice", "right"); rec.Code != 200 || deviceCookie(rec) != nil {
		t.Fatalf("a login beyond the cap: %d, cookie %v; want 200 and no cookie", rec.Code, deviceCookie(rec))
	}
	// At most 2·MaxDevices new devices a day: the revocation makes room for
	// 2 more, and a 5th device in 24 hours is refused.
	if err := lo.RevokeDevices(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, _, err := lo.TrustDevice(ctx, "alice"); err != nil {
			t.Fatalf("device %d after the revocation: %v", i+3, err)
		}
	}
	if err := lo.RevokeDevices(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lo.TrustDevice(ctx, "alice"); !errors.Is(err, lockout.ErrTooManyDevices) {
		t.Fatalf("a 5th device in a day: %v, want ErrTooManyDevices", err)
	}
	clock.Advance(24 * time.Hour)
	// Revoked slots wait out their tokens; an account has 48 slots: with 2
	// devices trusted and revoked every 13 hours (4 in any day), they are
	// all used up in 12 days.
	issued := 4
	for round := 0; ; round++ {
		if round > 0 {
			clock.Advance(13 * time.Hour)
			if err := lo.RevokeDevices(ctx, "alice"); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := lo.TrustDevice(ctx, "alice")
		if errors.Is(err, lockout.ErrTooManyDevices) {
			break
		}
		if err != nil || round > 30 {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, _, err := lo.TrustDevice(ctx, "alice"); err != nil {
			t.Fatalf("round %d, second device: %v", round, err)
		}
		issued += 2
	}
	if issued != 48 {
		t.Fatalf("%d devices trusted before every slot was revoked; want 48", issued)
	}
	clock.Advance(19*24*time.Hour + time.Minute) // a lifetime after the first revocations: their slots are free again
	if _, _, err := lo.TrustDevice(ctx, "alice"); err != nil {
		t.Fatalf("a lifetime later: %v", err)
	}
}

// TestKeyRotation: a token signed with a key that still verifies is
// trusted; new tokens are signed with the first key; a token whose key is
// gone is not trusted.
func TestKeyRotation(t *testing.T) {
	clock := start()
	s := memstore.New(memstore.WithClock(clock.Now))
	old := devicesLockout(t, s, clock, keyA)
	token, _, err := old.TrustDevice(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	rotated := devicesLockout(t, s, clock, keyB, keyA)
	if d, err := rotated.AttemptDevice(context.Background(), "alice", token); err != nil || !d.Trusted {
		t.Fatalf("an old key's token after the rotation: %+v %v", d, err)
	}
	fresh, _, err := rotated.TrustDevice(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	retired := devicesLockout(t, s, clock, keyB)
	if d, _ := retired.AttemptDevice(context.Background(), "alice", token); d.Trusted {
		t.Fatalf("a retired key's token: %+v", d)
	}
	if d, _ := retired.AttemptDevice(context.Background(), "alice", fresh); !d.Trusted {
		t.Fatalf("the new key's token: %+v", d)
	}
}

// TestTamperedTokens: every token that is not valid for the account is
// answered as an attempt without one: counted in the account's windows,
// 401 or 429 as they say, never an error.
func TestTamperedTokens(t *testing.T) {
	clock := start()
	s := memstore.New(memstore.WithClock(clock.Now))
	lo := devicesLockout(t, s, clock, keyB, keyA)
	ctx := context.Background()
	token, _, err := lo.TrustDevice(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bobs, _, _ := lo.TrustDevice(ctx, "bob")
	retiredKey, _, _ := devicesLockout(t, s, clock, []byte("a retired key, 32 bytes or more, gone now")).TrustDevice(ctx, "alice")
	expiring := devicesLockout(t, s, clock, keyB)
	lockout.SetClock(expiring, func() time.Time { return clock.Now().Add(-30*24*time.Hour - time.Second) })
	expired, _, _ := expiring.TrustDevice(ctx, "alice")
	revokedLo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyB)
	revoked, _, _ := revokedLo.TrustDevice(ctx, "alice")
	if err := revokedLo.RevokeDevices(ctx, "alice"); err != nil {
		t.Fatal(err)
	}

	flip := func(i int) string { b := []byte(token); b[i] ^= 1; return string(b) }
	sig := token[strings.LastIndexByte(token, '.')+1:]
	parts := strings.Split(token, ".")
	cases := []struct {
		name    string
		lo      *lockout.Lockout
		cookies []*http.Cookie
	}{
		{"a flipped bit in the version", lo, cookies(flip(0))},
		{"a flipped bit in the slot", lo, cookies(flip(2))},
		{"a flipped bit in the issue time", lo, cookies(flip(len(parts[0]) + len(parts[1]) + 3))},
		{"a flipped bit in the expiry", lo, cookies(flip(len(parts[0]) + len(parts[1]) + len(parts[2]) + 4))},
		{"a flipped bit in the MAC", lo, cookies(flip(len(token) - 3))},
		{"another slot", lo, cookies("1.1." + parts[2] + "." + parts[3] + "." + sig)},
		{"a later expiry", lo, cookies("1." + parts[1] + "." + parts[2] + ".9999999999." + sig)},
		{"the old three-part form", lo, cookies("1." + parts[1] + "." + parts[3] + "." + sig)},
		{"a shorter MAC", lo, cookies(token[:len(token)-2])},
		{"a MAC padded", lo, cookies(token + "==")},
		{"another account's", lo, cookies(bobs)},
		{"an expired one", lo, cookies(expired)},
		{"a retired key's", lo, cookies(retiredKey)},
		{"replayed after revocation", revokedLo, cookies(revoked)},
		{"1 MiB", lo, cookies(strings.Repeat("A", 1<<20))},
		{"500 cookies of the name, the first one garbage", lo, manyCookies(500, token)},
		{"empty", lo, cookies("")},
		{"base64 of nothing", lo, cookies("1.0.0.0." + base64.RawURLEncoding.EncodeToString(nil))},
		{"a negative slot", lo, cookies("1.-1." + parts[2] + "." + parts[3] + "." + sig)},
		{"a slot with a leading zero", lo, cookies("1.0" + parts[1] + "." + parts[2] + "." + parts[3] + "." + sig)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var checked atomic.Int64
			h := loginServer(c.lo, &checked)
			if err := c.lo.Reset(ctx, "alice"); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				rec := post(h, "alice", "guess", c.cookies...)
				if rec.Code != 401 {
					t.Fatalf("failure %d: %d %s, want 401", i+1, rec.Code, rec.Body)
				}
			}
			if rec := post(h, "alice", "right", c.cookies...); rec.Code != 429 {
				t.Fatalf("after 5 failures: %d %s, want 429: the token is not trusted", rec.Code, rec.Body)
			}
			if c.lo == lo {
				d, err := lo.AttemptDevice(ctx, "alice", token)
				if err != nil || !d.Trusted {
					t.Fatalf("the real token after the case: %+v %v", d, err)
				}
				if err := lo.Refund(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// aliceCookie is the name of alice's device cookie under the device tests'
// lockouts (named "login").
var aliceCookie = func() string {
	lo, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: time.Minute}}, Devices: &lockout.Devices{Keys: [][]byte{keyA}}})
	if err != nil {
		panic(err)
	}
	return lo.CookieName("alice")
}()

func cookies(v string) []*http.Cookie {
	return []*http.Cookie{{Name: aliceCookie, Value: v}}
}

// manyCookies returns n cookies of alice's device cookie's name, the last
// one token: past the first few, none is read.
func manyCookies(n int, token string) []*http.Cookie {
	cs := make([]*http.Cookie, n)
	for i := range cs {
		cs[i] = &http.Cookie{Name: aliceCookie, Value: "x"}
	}
	cs[n-1].Value = token
	return cs
}

// TestSkipTrusted: failures of others behind the owner's address block the
// address, but not the owner's trusted device, with SkipTrusted on the
// per-IP lockout; a forged cookie does not get past it.
func TestSkipTrusted(t *testing.T) {
	clock := start()
	s := memstore.New(memstore.WithClock(clock.Now))
	account := devicesLockout(t, s, clock, keyA)
	perIP, err := lockout.New(s, lockout.Config{Name: "login-ip", Windows: []lockout.Window{
		{Scope: "ip", Attempts: 10, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	var checked atomic.Int64
	inner := loginServer(account, &checked)
	username := bodykey.FormValue("username")
	skipping := perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess(), lockout.SkipTrusted(account, username))(inner)
	plain := perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess())(inner)
	c := deviceCookie(post(skipping, "alice", "right"))
	for i := range 10 { // others behind the same address, guessing other accounts
		if code := post(skipping, "user"+string(rune('a'+i)), "guess").Code; code != 401 {
			t.Fatalf("failure %d: %d", i+1, code)
		}
	}
	if code := post(skipping, "bob", "right").Code; code != 429 {
		t.Fatalf("the address after 10 failures: %d, want 429", code)
	}
	if rec := post(skipping, "alice", "right", c); rec.Code != 200 {
		t.Fatalf("alice's trusted device behind the blocked address: %d", rec.Code)
	}
	if code := post(plain, "alice", "right", c).Code; code != 429 {
		t.Fatalf("without SkipTrusted: %d, want 429", code)
	}
	forged := &http.Cookie{Name: c.Name, Value: c.Value[:len(c.Value)-1] + "A"}
	if forged.Value == c.Value {
		forged.Value = c.Value[:len(c.Value)-1] + "B"
	}
	if code := post(skipping, "alice", "right", forged).Code; code != 429 {
		t.Fatalf("a forged cookie: %d, want 429", code)
	}
	if code := post(skipping, "bob", "right", c).Code; code != 429 { // alice's cookie, bob's name
		t.Fatalf("alice's cookie for bob: %d, want 429", code)
	}
}

// TestLoggedIn: a device is trusted only when the handler calls LoggedIn
// for the account the attempt was counted against; LoggedIn settles the
// attempt as a success whatever the status (a 303 too).
func TestLoggedIn(t *testing.T) {
	clock := start()
	lo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyA)
	var loggedIn error
	h := lo.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.FormValue("password") {
		case "right": // no LoggedIn: a 2xx resets, no cookie
		case "remember":
			loggedIn = lockout.LoggedIn(r.Context(), r.FormValue("as"))
			http.Redirect(w, r, "/home", http.StatusSeeOther)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	ctx := context.Background()
	if rec := post(h, "alice", "right"); rec.Code != 200 || deviceCookie(rec) != nil {
		t.Fatalf("a login without LoggedIn: %d, cookie %v; want 200, no cookie", rec.Code, deviceCookie(rec))
	}
	for range 3 {
		post(h, "alice", "guess")
	}
	r := login("alice", "remember")
	r.URL.RawQuery = "as=bob"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if loggedIn == nil || deviceCookie(rec) != nil {
		t.Fatalf("LoggedIn for bob on alice's attempt: %v, cookie %v; want an error and no cookie", loggedIn, deviceCookie(rec))
	}
	if d, _ := lo.Check(ctx, "alice"); d.Counts[0] != 3 {
		t.Fatalf("alice's windows after a 303 without her LoggedIn: %+v, want the 3 failures (the attempt refunded)", d)
	}
	r = login("alice", "remember")
	r.URL.RawQuery = "as=alice"
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if loggedIn != nil || rec.Code != http.StatusSeeOther || deviceCookie(rec) == nil {
		t.Fatalf("LoggedIn for alice, then 303: %v, %d, cookie %v", loggedIn, rec.Code, deviceCookie(rec))
	}
	if d, _ := lo.Check(ctx, "alice"); d.Counts[0] != 0 {
		t.Fatalf("alice's windows after LoggedIn: %+v, want reset", d)
	}
	if err := lockout.LoggedIn(ctx, "alice"); err == nil {
		t.Fatal("LoggedIn outside a Middleware: no error")
	}
}

// TestDevicesRefused: bad Devices settings are errors from New that say how
// to fix them, all at once.
func TestDevicesRefused(t *testing.T) {
	_, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: time.Minute, Block: time.Minute},
	}, Devices: &lockout.Devices{Keys: [][]byte{[]byte("short")}, Failures: 101, FailureWindow: time.Millisecond,
		Lifetime: time.Hour + time.Millisecond, MaxDevices: 17, Cookie: "bad name"}})
	want := []string{
		`ratekit: invalid limit "login": devices key 1 has 5 bytes; use at least 32 random bytes (crypto/rand)`,
		`ratekit: invalid limit "login": devices failures must be between 1 and 100 (got 101)`,
		`ratekit: invalid limit "login": devices failure window must be whole milliseconds from 1s to 8784h (got 1ms)`,
		`ratekit: invalid limit "login": devices lifetime must be whole seconds from 1m to 8760h (got 1h0m0.001s)`,
		`ratekit: invalid limit "login": devices max devices must be between 1 and 16 (got 17)`,
		`ratekit: invalid limit "login": devices cookie "bad name" is not a cookie name; use up to 48 letters, digits, '-' and '_'`,
	}
	if !errors.Is(err, ratekit.ErrInvalidLimit) || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("New: %v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	if _, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: time.Minute, Block: time.Minute},
	}, Devices: &lockout.Devices{}}); err == nil || !strings.Contains(err.Error(), "devices keys must be 1 to 8 keys (got 0)") {
		t.Fatalf("no keys: %v", err)
	}
}

// TestShorterLifetime: a token signed under a longer Lifetime is not
// trusted once Lifetime is cut, since its revocation would not outlast it:
// not at once, nor once it is within the new Lifetime of its end.
func TestShorterLifetime(t *testing.T) {
	clock := start()
	s := memstore.New(memstore.WithClock(clock.Now))
	long, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Minute}},
		Devices: &lockout.Devices{Keys: [][]byte{keyA}, Lifetime: 365 * 24 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	lockout.SetClock(long, clock.Now)
	token, _, err := long.TrustDevice(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	short := devicesLockout(t, s, clock, keyA) // 30 days
	if d, _ := short.AttemptDevice(context.Background(), "alice", token); d.Trusted {
		t.Fatalf("a 365-day token under a 30-day Lifetime: %+v, want untrusted", d)
	}
	clock.Advance(20 * 24 * time.Hour)
	if err := short.RevokeDevices(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(320 * 24 * time.Hour) // 25 days before its end; the revocation is long over
	if d, _ := short.AttemptDevice(context.Background(), "alice", token); d.Trusted {
		t.Fatalf("the 365-day token 340 days on: %+v, want untrusted", d)
	}
}

// TestClockSkew: a token issued by an instance whose clock runs 2 s ahead
// is trusted by the others; one issued more than a minute ahead is not.
func TestClockSkew(t *testing.T) {
	clock := start()
	s := memstore.New(memstore.WithClock(clock.Now))
	ahead := devicesLockout(t, s, clock, keyA)
	lockout.SetClock(ahead, func() time.Time { return clock.Now().Add(2 * time.Second) })
	token, _, err := ahead.TrustDevice(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	behind := devicesLockout(t, s, clock, keyA)
	if d, err := behind.AttemptDevice(context.Background(), "alice", token); err != nil || !d.Trusted {
		t.Fatalf("a token from a clock 2 s ahead: %+v %v, want trusted", d, err)
	}
	lockout.SetClock(ahead, func() time.Time { return clock.Now().Add(61 * time.Second) })
	if token, _, err = ahead.TrustDevice(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	if d, _ := behind.AttemptDevice(context.Background(), "alice", token); d.Trusted {
		t.Fatalf("a token from a clock 61 s ahead: %+v, want untrusted", d)
	}
}

// TestFullSlotSkipped: a free slot whose earlier device left a full
// failure log (FailureWindow longer than Lifetime) is not handed out: its
// new device would be revoked at its first attempt.
func TestFullSlotSkipped(t *testing.T) {
	clock := start()
	lo, err := lockout.New(memstore.New(memstore.WithClock(clock.Now)), lockout.Config{Name: "login",
		Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Minute}},
		Devices: &lockout.Devices{Keys: [][]byte{keyA}, Failures: 3, Lifetime: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	lockout.SetClock(lo, clock.Now)
	ctx := context.Background()
	old, _, err := lo.TrustDevice(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if d, _ := lo.AttemptDevice(ctx, "alice", old); !d.Trusted {
			t.Fatalf("failure %d of the first device: %+v", i+1, d)
		}
	}
	clock.Advance(time.Hour + time.Minute) // its slot is free; its log still holds 3 failures
	fresh, _, err := lo.TrustDevice(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := lo.AttemptDevice(ctx, "alice", fresh); !d.Trusted || d.Revoked {
		t.Fatalf("the new device's first attempt: %+v, want trusted", d)
	}
}

// TestLoggedInTooLate: LoggedIn after the status is written does nothing
// (no slot taken, no reset) and says so; a second call returns what the
// first did.
func TestLoggedInTooLate(t *testing.T) {
	clock := start()
	lo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyA)
	var late, first, second error
	h := lo.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.FormValue("password") {
		case "late":
			w.WriteHeader(http.StatusUnauthorized)
			late = lockout.LoggedIn(r.Context(), "alice")
		case "twice":
			first = lockout.LoggedIn(r.Context(), "alice")
			second = lockout.LoggedIn(r.Context(), "alice")
		}
	}))
	for range 2 {
		post(h, "alice", "late")
	}
	if late == nil {
		t.Fatal("LoggedIn after the status: no error")
	}
	if d, _ := lo.Check(context.Background(), "alice"); d.Counts[0] != 2 {
		t.Fatalf("after two late LoggedIn: %+v, want both failures counted", d)
	}
	if _, _, err := lo.TrustDevice(context.Background(), "alice"); err != nil { // slots 1 and 2 of MaxDevices 2 free
		t.Fatal(err)
	}
	if _, _, err := lo.TrustDevice(context.Background(), "alice"); err != nil {
		t.Fatalf("a late LoggedIn took a slot: %v", err)
	}
	if rec := post(h, "alice", "twice"); first == nil || !errors.Is(first, lockout.ErrTooManyDevices) || second != first || deviceCookie(rec) != nil {
		t.Fatalf("LoggedIn twice at the cap: %v then %v, cookie %v", first, second, deviceCookie(rec))
	}
}

// TestPlantedCookie: a cookie of the owner's name planted before it (a
// longer path, from another site of the domain) does not hide the owner's;
// past the first few cookies of the name none is read.
func TestPlantedCookie(t *testing.T) {
	clock := start()
	lo := devicesLockout(t, memstore.New(memstore.WithClock(clock.Now)), clock, keyA)
	var checked atomic.Int64
	h := loginServer(lo, &checked)
	c := deviceCookie(post(h, "alice", "right"))
	for range 5 {
		post(h, "alice", "guess")
	}
	planted := &http.Cookie{Name: c.Name, Value: "1.0.1.AAAA"}
	if code := post(h, "alice", "right", planted, planted, planted, c).Code; code != 200 {
		t.Fatalf("the owner's cookie 4th of its name: %d, want 200", code)
	}
	if code := post(h, "alice", "right", planted, planted, planted, planted, c).Code; code != 429 {
		t.Fatalf("the owner's cookie 5th of its name: %d, want 429 (not read)", code)
	}
}

// TestSkipTrustedRevoked: a revoked token still passes a SkipTrusted
// lockout (the test needs no store call), and the account's lockout counts
// the attempt in the account's windows.
func TestSkipTrustedRevoked(t *testing.T) {
	clock := start()
	s := memstore.New(memstore.WithClock(clock.Now))
	account := devicesLockout(t, s, clock, keyA)
	perIP, err := lockout.New(s, lockout.Config{Name: "login-ip", Windows: []lockout.Window{
		{Scope: "ip", Attempts: 1, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	var checked atomic.Int64
	username := bodykey.FormValue("username")
	h := perIP.Middleware(ratekit.ByIP(), lockout.SkipTrusted(account, username))(loginServer(account, &checked))
	c := deviceCookie(post(h, "alice", "right"))
	if err := account.RevokeDevices(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if code := post(h, "alice", "guess", c).Code; code != 401 {
			t.Fatalf("guess %d with the revoked cookie: %d, want 401 (past the per-IP lockout)", i+1, code)
		}
	}
	if d, _ := account.Check(context.Background(), "alice"); d.Counts[0] != 3 {
		t.Fatalf("alice's windows: %+v, want the 3 guesses", d)
	}
	if d, _ := perIP.Check(context.Background(), "192.0.2.1"); d.Counts[0] != 0 {
		t.Fatalf("the address: %+v, want nothing counted", d)
	}
}

// TestInformationalStatus: a 103 before the handler's 401 is not taken for
// the response's status: the failure counts.
func TestInformationalStatus(t *testing.T) {
	lo := newLockout(t, memstore.New(), false)
	h := lo.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), login("alice", "x"))
	}
	if d, _ := lo.Check(context.Background(), "alice"); d.Counts[0] != 2 {
		t.Fatalf("after two 103-then-401 answers: %+v, want 2 failures", d)
	}
}

// TestDeviceStoreDown: when the store fails a trusted device's attempt, the
// lockout fails closed (503) as for any attempt, and FailOpen lets it
// through; neither is a 429 nor lets the error text out.
func TestDeviceStoreDown(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		clock := start()
		lo, err := lockout.New(downStore{memstore.New(memstore.WithClock(clock.Now))}, lockout.Config{Name: "login", FailOpen: failOpen,
			Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Minute}}, Devices: &lockout.Devices{Keys: [][]byte{keyA}}})
		if err != nil {
			t.Fatal(err)
		}
		token, expires, err := lo.TrustDevice(context.Background(), "alice") // Reserve fails; Peek and Allow do not
		if err != nil {
			t.Fatal(err)
		}
		var checked atomic.Int64
		rec := post(loginServer(lo, &checked), "alice", "right", lo.DeviceCookie("alice", token, expires))
		want := http.StatusServiceUnavailable
		if failOpen {
			want = http.StatusOK
		}
		if rec.Code != want || strings.Contains(rec.Body.String(), "secret") || deviceCookie(rec) != nil {
			t.Fatalf("FailOpen %v, store down: %d %s, cookie %v; want %d and no second cookie for the device", failOpen, rec.Code, rec.Body, deviceCookie(rec), want)
		}
	}
}
