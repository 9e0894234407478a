package main

import (
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
)

// demoUsers are the demo's credentials, listed by GET /.
var demoUsers = map[string]string{"alice": "wonderland", "bob": "builder"}

// loginRoute protects POST /login per account (5 failures in 15 minutes
// block the account for 15 minutes; 20 a day block it for a day) and per IP
// (50 failures an hour block the IP for an hour), counting failures only.
// When the store is down the route fails closed (503).
func loginRoute(store ratekit.LockoutStore) (http.Handler, []string, error) {
	account, err := ratekit.NewLockout(store, ratekit.LockoutConfig{Name: "login", Windows: []ratekit.LockoutWindow{
		{Scope: "temp", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute},
		{Scope: "long", Attempts: 20, Window: 24 * time.Hour, Block: 24 * time.Hour},
	}})
	if err != nil {
		return nil, nil, err
	}
	ip, err := ratekit.NewLockout(store, ratekit.LockoutConfig{Name: "login-ip", Windows: []ratekit.LockoutWindow{
		{Scope: "ip", Attempts: 50, Window: time.Hour, Block: time.Hour},
	}})
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
	h := ip.Middleware(ratekit.ByIP(), ratekit.KeepOnSuccess())(account.Middleware(ratekit.ByFormValue("username"))(check))
	limits := []string{"per account: 5 failures / 15 min → blocked 15 min; 20 / day → blocked 1 day", "per IP: 50 failures / hour → blocked 1 hour"}
	return h, limits, nil
}
