package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/observe"
)

// demoUsers are the demo's credentials, listed by GET /.
var demoUsers = map[string]string{"alice": "wonderland", "bob": "builder"}

// loginLimits are the lockout windows of POST /login.
type loginLimits struct {
	account, accountDay, ip lockout.Window
}

// defaultLogin: per account, 5 failures in 15 minutes block the account for
// 15 minutes and 20 a day block it for a day; per IP, 50 failures an hour
// block the IP for an hour.
var defaultLogin = loginLimits{
	account:    lockout.Window{Scope: "temp", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute},
	accountDay: lockout.Window{Scope: "long", Attempts: 20, Window: 24 * time.Hour, Block: 24 * time.Hour},
	ip:         lockout.Window{Scope: "ip", Attempts: 50, Window: time.Hour, Block: time.Hour},
}

// loginRoute protects POST /login per account and per IP, counting failures
// only. When the store is down the route fails closed (503).
func loginRoute(store ratekit.Store, l loginLimits, obs observe.Observer) (http.Handler, []string, error) {
	account, err := lockout.New(store, lockout.Config{Name: "login", Windows: []lockout.Window{l.account, l.accountDay}, Observer: obs})
	if err != nil {
		return nil, nil, err
	}
	ip, err := lockout.New(store, lockout.Config{Name: "login-ip", Windows: []lockout.Window{l.ip}, Observer: obs})
	if err != nil {
		return nil, nil, err
	}
	check := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password := r.PostFormValue("username"), r.PostFormValue("password")
		if want, ok := demoUsers[user]; !ok || want != password {
			w.WriteHeader(http.StatusUnauthorized)
			writeJSON(w, map[string]any{"status": 401, "code": "INVALID_CREDENTIALS", "message": "Wrong username or password."})
			return
		}
		writeJSON(w, map[string]any{"status": 200, "message": "Welcome, " + user + "."})
	})
	// The per-IP lockout also counts what never reaches a password check:
	// bodies without a username (400), bodies over bodykey.FormValue's 64 KiB
	// (413) and attempts on blocked accounts (429), so that one address
	// flooding the route is blocked too.
	ipFailures := lockout.FailureStatuses(http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity,
		http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests)
	h := ip.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess(), ipFailures)(account.Middleware(bodykey.FormValue("username"))(check))
	limits := []string{"per account: " + describeWindow(l.account) + "; " + describeWindow(l.accountDay), "per IP: " + describeWindow(l.ip)}
	return h, limits, nil
}

// describeWindow says what a lockout window does, e.g. "5 failures / 15m0s →
// blocked 15m0s".
func describeWindow(w lockout.Window) string {
	return fmt.Sprintf("%d failures / %s → blocked %s", w.Attempts, w.Window, w.Block)
}
