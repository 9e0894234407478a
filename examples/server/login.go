package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

// demoUsers are the demo's credentials, listed by GET /.
var demoUsers = map[string]string{"alice": "wonderland", "bob": "builder"}

// loginLimits are the lockout windows of POST /login and POST
// /password-reset.
type loginLimits struct {
	account, accountDay, password, ip lockout.Window
}

// defaultLogin: per account, 5 failures in 15 minutes block the account for
// 15 minutes and 20 a day block it for a day; per password, whatever the
// account, 20 failures an hour block the password for an hour; per IP, 50
// failures an hour block the IP for an hour. A trusted device may fail 10
// times a day (lockout's default) before its cookie is revoked.
var defaultLogin = loginLimits{
	account:    lockout.Window{Scope: "temp", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute},
	accountDay: lockout.Window{Scope: "long", Attempts: 20, Window: 24 * time.Hour, Block: 24 * time.Hour},
	password:   lockout.Window{Scope: "password", Attempts: 20, Window: time.Hour, Block: time.Hour},
	ip:         lockout.Window{Scope: "ip", Attempts: 50, Window: time.Hour, Block: time.Hour},
}

// loginRoutes protects POST /login and POST /password-reset, which check a
// password both, behind one chain of lockouts counting failures only: per
// IP, then per password (any account: password spraying), then per account
// with trusted devices, signed with deviceKey. When the store is down the
// routes fail closed (503). It returns the two handlers and the limits, as
// GET / lists them.
func loginRoutes(store ratekit.Store, l loginLimits, deviceKey []byte, obs observe.Observer) (login, reset http.Handler, limits []string, err error) {
	devices := &lockout.Devices{
		Keys:     [][]byte{deviceKey},
		Failures: 10, FailureWindow: 24 * time.Hour, // lockout's defaults, said by GET /
		// The demo serves plain HTTP, and browsers and curl send a Secure
		// cookie back over HTTPS only: the device cookie would never return.
		// A production service serves HTTPS and leaves this false.
		InsecureCookie: true,
	}
	account, err := lockout.New(store, lockout.Config{Name: "login", Windows: []lockout.Window{l.account, l.accountDay}, Observer: obs, Devices: devices})
	if err != nil {
		return nil, nil, nil, err
	}
	password, err := lockout.New(store, lockout.Config{Name: "login-password", Windows: []lockout.Window{l.password}, Observer: obs})
	if err != nil {
		return nil, nil, nil, err
	}
	ip, err := lockout.New(store, lockout.Config{Name: "login-ip", Windows: []lockout.Window{l.ip}, Observer: obs})
	if err != nil {
		return nil, nil, nil, err
	}
	// The per-IP lockout also counts what never reaches a password check:
	// bodies without a username or password (400), bodies over
	// bodykey.FormValue's 64 KiB (413) and attempts on blocked accounts or
	// passwords (429), so that one address flooding the route is blocked too.
	ipFailures := lockout.FailureStatuses(http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity,
		http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests)
	// The per-password lockout keys by a keyed hash of the password, so the
	// store never holds one. Its secret is derived from the device key, which
	// every instance of a store shares: they all count a password under one
	// hash.
	// A password is counted as typed (Exact): case and spaces count.
	byPassword := lockout.KeyedHash(passwordSecret(deviceKey), bodykey.FormValue("password", bodykey.Exact()))
	// A request whose device cookie is signed for the account it names
	// passes the per-IP and per-password lockouts uncounted (SkipTrusted):
	// others failing behind the owner's address, or with the owner's
	// password, never refuse the owner's trusted device. The per-account
	// lockout still counts it, against the device.
	username := bodykey.FormValue("username")
	trusted := lockout.SkipTrusted(account, username)
	protect := func(h http.Handler) http.Handler {
		return ip.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess(), ipFailures, trusted)(
			password.Middleware(byPassword, lockout.KeepOnSuccess(), trusted)(
				account.Middleware(username)(h)))
	}
	limits = []string{
		"per account: " + describeWindow(l.account) + "; " + describeWindow(l.accountDay),
		fmt.Sprintf("per trusted device (cookie ratekit-device-…, one per account, set by a login): %d failures / %s → its cookie is revoked; the account's limits do not apply to it",
			devices.Failures, devices.FailureWindow),
		"per password, whatever the account: " + describeWindow(l.password),
		"per IP: " + describeWindow(l.ip),
	}
	return protect(http.HandlerFunc(checkLogin)), protect(passwordReset(account)), limits, nil
}

// checkLogin answers POST /login: 200 for a demo user's password, else 401.
// A success is reported to the lockout (LoggedIn), which clears the
// account's failures and trusts the device: it sets the device cookie.
func checkLogin(w http.ResponseWriter, r *http.Request) {
	user, ok := authenticate(w, r)
	if !ok {
		return
	}
	loggedIn(r, user)
	writeJSON(w, map[string]any{"status": 200, "message": "Welcome, " + user + "."})
}

// loggedIn tells the lockout that user logged in; a full list of trusted
// devices leaves the login standing without a cookie.
func loggedIn(r *http.Request, user string) {
	if err := lockout.LoggedIn(r.Context(), user); err != nil && !errors.Is(err, lockout.ErrTooManyDevices) {
		slog.Warn("ratekit demo: trusting a device", "error", err)
	}
}

// passwordReset answers POST /password-reset, the demo's stand-in for a
// real reset (which would take a token sent by email, and a new password):
// with a demo user's password it revokes every device trusted for the
// account, on every instance of the store, and answers 200; a wrong
// password is 401. A reset made without a trusted cookie gets one, as a
// login does: the device that reset the password is trusted from then on.
func passwordReset(account *lockout.Lockout) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := authenticate(w, r)
		if !ok {
			return
		}
		if err := account.RevokeDevices(r.Context(), user); err != nil {
			slog.Warn("ratekit demo: revoking devices", "error", err)
			response.Unavailable(time.Second).Write(w, nil)
			return
		}
		loggedIn(r, user) // a device without a trusted cookie is trusted from now on
		writeJSON(w, map[string]any{"status": 200, "message": "Password reset for " + user + ": every device trusted before now is revoked."})
	})
}

// authenticate returns the user a form's username and password name, or
// answers 401 and reports false. It reads them as the lockouts' key
// functions do (r.FormValue: the body, then the query), so that the
// account checked is the account counted.
func authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	user, password := r.FormValue("username"), r.FormValue("password")
	if want, ok := demoUsers[user]; !ok || !hmac.Equal([]byte(want), []byte(password)) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"status": 401, "code": "INVALID_CREDENTIALS", "message": "Wrong username or password."})
		return "", false
	}
	return user, true
}

// passwordSecret derives the secret of the per-password lockout's keyed
// hash from the device key: apart from the key's own use, and the same on
// every instance that shares the key.
func passwordSecret(deviceKey []byte) []byte {
	h := hmac.New(sha256.New, deviceKey)
	h.Write([]byte("ratekit demo: per-password lockout"))
	return h.Sum(nil)
}

// randomBytes returns n random bytes (crypto/rand).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// describeWindow says what a lockout window does, e.g. "5 failures / 15m0s →
// blocked 15m0s".
func describeWindow(w lockout.Window) string {
	return fmt.Sprintf("%d failures / %s → blocked %s", w.Attempts, w.Window, w.Block)
}
