package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit/internal/redistest"
)

// form sends a url-encoded POST of path with values through h, from addr
// (a RemoteAddr), with cookies.
func form(h http.Handler, path, addr string, values url.Values, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(values.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = addr
	for _, c := range cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// credentials are a login form's fields.
func credentials(user, password string) url.Values {
	return url.Values{"username": {user}, "password": {password}}
}

// deviceCookie returns the device cookie rec sets, nil when none.
func deviceCookie(rec *httptest.ResponseRecorder) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if strings.HasPrefix(c.Name, "ratekit-device-") {
			return c
		}
	}
	return nil
}

// refusal is the body of the kit's 429.
type refusal struct {
	Code    string
	Context struct {
		Policy     string
		RetryAfter int64
	}
}

// refused reports whether rec is the kit's 429 with code, policy and
// Retry-After retry (in seconds, 0: not checked).
func refused(rec *httptest.ResponseRecorder, code, policy string, retry int64) bool {
	var body refusal
	if rec.Code != http.StatusTooManyRequests || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Code != code || body.Context.Policy != policy {
		return false
	}
	return retry == 0 || (rec.Header().Get("Retry-After") == fmt.Sprint(retry) && body.Context.RetryAfter == retry)
}

// TestDemoTrustedDevice runs POST /login and POST /password-reset on both
// stores with the demo's own windows: a login sets the device cookie; 5
// wrong passwords for alice from 5 other addresses lock her out without it
// (429, Retry-After 900), while with it she gets in; a password reset
// revokes the cookie, which then counts for nothing (429) and is deleted.
// On Redis, two instances share the store and the device key: the cookie
// one sets is trusted by the other, and a reset through one revokes it for
// both.
func TestDemoTrustedDevice(t *testing.T) {
	for _, store := range []string{"in-process", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			c := config{quota: 3, window: time.Minute, prefix: redistest.Prefix(t), login: defaultLogin}
			a, _ := handlerOf(t, store == "redis", c)
			h := a // the instance of every later request
			if store == "redis" {
				h, _ = handlerOf(t, true, c)
			}
			const home = "192.0.2.10:5000"
			rec := form(a, "/login", home, credentials("alice", "wonderland"))
			cookie := deviceCookie(rec)
			if rec.Code != 200 || cookie == nil || cookie.Value == "" {
				t.Fatalf("alice's login: %d, cookie %v; want 200 and a device cookie", rec.Code, cookie)
			}
			if !cookie.HttpOnly || cookie.Secure || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" ||
				time.Until(cookie.Expires) < 30*24*time.Hour-time.Minute || time.Until(cookie.Expires) > 30*24*time.Hour {
				t.Fatalf("the cookie: %+v; want HttpOnly, not Secure (plain HTTP), SameSite=Strict, 30 days", cookie)
			}
			for i := range 5 {
				if rec := form(h, "/login", fmt.Sprintf("198.51.100.%d:4000", i+1), credentials("alice", "guess")); rec.Code != 401 {
					t.Fatalf("wrong password %d from another address: %d, want 401", i+1, rec.Code)
				}
			}
			if rec := form(h, "/login", home, credentials("alice", "wonderland")); !refused(rec, "TOO_MANY_ATTEMPTS", "temp", 900) {
				t.Fatalf("alice without her cookie: %d %s %v, want 429 temp, Retry-After 900", rec.Code, rec.Body, rec.Header())
			}
			for i := range 2 {
				if rec := form(h, "/login", home, credentials("alice", "wonderland"), cookie); rec.Code != 200 || deviceCookie(rec) != nil {
					t.Fatalf("alice with her cookie, login %d: %d %s, cookie %v; want 200 and no new cookie", i+1, rec.Code, rec.Body, deviceCookie(rec))
				}
			}
			if rec := form(h, "/password-reset", home, credentials("alice", "guess"), cookie); rec.Code != 401 {
				t.Fatalf("a reset with a wrong password: %d, want 401", rec.Code)
			}
			if rec := form(a, "/password-reset", home, credentials("alice", "wonderland"), cookie); rec.Code != 200 || deviceCookie(rec) != nil {
				t.Fatalf("the reset: %d %s, cookie %v; want 200 and no new cookie", rec.Code, rec.Body, deviceCookie(rec))
			}
			rec = form(h, "/login", home, credentials("alice", "wonderland"), cookie)
			gone := deviceCookie(rec)
			if !refused(rec, "TOO_MANY_ATTEMPTS", "temp", 0) || gone == nil || gone.MaxAge >= 0 {
				t.Fatalf("the old cookie after the reset: %d %s, cookie %+v; want 429 (alice is locked) and the cookie deleted", rec.Code, rec.Body, gone)
			}
			if rec := form(h, "/login", "198.51.100.1:4000", credentials("bob", "builder")); rec.Code != 200 {
				t.Fatalf("bob meanwhile: %d, want 200", rec.Code)
			}
		})
	}
}

// TestDemoResetWithoutCookie: a password reset made without a trusted
// cookie revokes the devices trusted before it and trusts the device that
// made it.
func TestDemoResetWithoutCookie(t *testing.T) {
	h, _ := handlerOf(t, false, config{quota: 3, window: time.Minute, login: defaultLogin})
	laptop := deviceCookie(form(h, "/login", "192.0.2.10:5000", credentials("alice", "wonderland")))
	rec := form(h, "/password-reset", "192.0.2.11:5000", credentials("alice", "wonderland"))
	phone := deviceCookie(rec)
	if laptop == nil || rec.Code != 200 || phone == nil || phone.Value == laptop.Value {
		t.Fatalf("the reset from a phone: %d, cookie %v; want 200 and a new cookie", rec.Code, phone)
	}
	for i := range 5 {
		form(h, "/login", fmt.Sprintf("198.51.100.%d:4000", i+1), credentials("alice", "guess"))
	}
	if rec := form(h, "/login", "192.0.2.11:5000", credentials("alice", "wonderland"), phone); rec.Code != 200 {
		t.Fatalf("the phone while alice is locked: %d, want 200", rec.Code)
	}
	if rec := form(h, "/login", "192.0.2.10:5000", credentials("alice", "wonderland"), laptop); rec.Code != 429 {
		t.Fatalf("the laptop, revoked by the reset: %d, want 429", rec.Code)
	}
}

// TestDemoPasswordSpraying: one password against 21 made-up accounts from
// 21 addresses passes the per-account and per-IP lockouts; the
// per-password one refuses the 21st after 20 failures (an hour's block),
// whatever the account. Other passwords pass.
func TestDemoPasswordSpraying(t *testing.T) {
	h, _ := handlerOf(t, false, config{quota: 3, window: time.Minute, login: defaultLogin})
	addr := func(i int) string { return fmt.Sprintf("203.0.113.%d:4000", i) }
	for i := range 20 {
		if rec := form(h, "/login", addr(i), credentials(fmt.Sprintf("user%02d", i), "Summer2026!")); rec.Code != 401 {
			t.Fatalf("spray %d: %d, want 401", i+1, rec.Code)
		}
	}
	if rec := form(h, "/login", addr(20), credentials("user20", "Summer2026!")); !refused(rec, "TOO_MANY_ATTEMPTS", "password", 3600) {
		t.Fatalf("spray 21: %d %s, want 429 password, Retry-After 3600", rec.Code, rec.Body)
	}
	// The password is counted as typed (bodykey.Exact): another case is
	// another password.
	if rec := form(h, "/login", addr(21), credentials("user21", "SUMMER2026!")); rec.Code != 401 {
		t.Fatalf("the password in capitals: %d, want 401 (another password)", rec.Code)
	}
	if rec := form(h, "/login", addr(22), credentials("user00", "Autumn2026!")); rec.Code != 401 {
		t.Fatalf("another password: %d, want 401", rec.Code)
	}
	if rec := form(h, "/login", addr(23), credentials("alice", "wonderland")); rec.Code != 200 {
		t.Fatalf("alice: %d, want 200", rec.Code)
	}
}

// TestDemoSprayedOwner: when alice's own password is sprayed over other
// accounts, the per-password lockout refuses it, except from alice's
// trusted device (SkipTrusted), which the per-account lockout counts alone.
func TestDemoSprayedOwner(t *testing.T) {
	h, _ := handlerOf(t, false, config{quota: 3, window: time.Minute, login: defaultLogin})
	laptop := deviceCookie(form(h, "/login", "192.0.2.10:5000", credentials("alice", "wonderland")))
	if laptop == nil {
		t.Fatal("no device cookie")
	}
	for i := range 20 {
		if rec := form(h, "/login", fmt.Sprintf("203.0.113.%d:4000", i), credentials(fmt.Sprintf("user%02d", i), "wonderland")); rec.Code != 401 {
			t.Fatalf("spray %d: %d, want 401", i+1, rec.Code)
		}
	}
	if rec := form(h, "/login", "192.0.2.11:5000", credentials("alice", "wonderland")); !refused(rec, "TOO_MANY_ATTEMPTS", "password", 3600) {
		t.Fatalf("alice from a new device: %d %s, want 429 password", rec.Code, rec.Body)
	}
	if rec := form(h, "/login", "192.0.2.10:5000", credentials("alice", "wonderland"), laptop); rec.Code != 200 {
		t.Fatalf("alice's trusted laptop: %d %s, want 200", rec.Code, rec.Body)
	}
}

func TestParseDeviceKey(t *testing.T) {
	if k, err := parseDeviceKey(""); k != nil || err != nil {
		t.Fatalf("empty: %x %v, want none (a random key at start)", k, err)
	}
	for _, bad := range []string{"zz", strings.Repeat("ab", 31)} {
		if _, err := parseDeviceKey(bad); err == nil {
			t.Fatalf("%q: no error", bad)
		}
	}
	if k, err := parseDeviceKey(strings.Repeat("ab", 32)); len(k) != 32 || err != nil {
		t.Fatalf("32 bytes: %x %v", k, err)
	}
}

// TestDemoAccountFromTwoPlaces: a login whose query and multipart body name
// different accounts is checked for the account the lockout counts
// (r.FormValue and bodykey.FormValue read the query before a multipart
// body): alice's credentials in the query log alice in, and the device
// cookie is alice's, whatever bob's in the body.
func TestDemoAccountFromTwoPlaces(t *testing.T) {
	h, _ := handlerOf(t, false, config{quota: 3, window: time.Minute, login: defaultLogin})
	alices := deviceCookie(form(h, "/login", "192.0.2.21:5000", credentials("alice", "wonderland")))
	var body bytes.Buffer
	mp := multipart.NewWriter(&body)
	_ = mp.WriteField("username", "bob")
	_ = mp.WriteField("password", "builder")
	_ = mp.Close()
	r := httptest.NewRequest(http.MethodPost, "/login?username=alice&password=wonderland", &body)
	r.Header.Set("Content-Type", mp.FormDataContentType())
	r.RemoteAddr = "192.0.2.20:5000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	c := deviceCookie(rec)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "alice") || alices == nil || c == nil || c.Name != alices.Name {
		t.Fatalf("alice in the query, bob in the body: %d %s, cookie %v; want alice logged in with alice's cookie (%v)", rec.Code, rec.Body, c, alices)
	}
}
