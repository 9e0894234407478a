// Command login is the README's login example: POST /login protected per
// account and per IP by lockouts that count failed attempts only.
package main

import (
	"log"
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	store := memstore.New()
	mux := http.NewServeMux()

	account, err := lockout.New(store, lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute},
		{Scope: "long", Attempts: 20, Window: 24 * time.Hour, Block: 24 * time.Hour},
	}})
	if err != nil {
		log.Fatal(err)
	}
	perIP, err := lockout.New(store, lockout.Config{Name: "login-ip", Windows: []lockout.Window{
		{Scope: "ip", Attempts: 50, Window: time.Hour, Block: time.Hour},
	}})
	if err != nil {
		log.Fatal(err)
	}
	mux.Handle("POST /login", perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess())(
		account.Middleware(ratekit.ByFormValue("username"))(http.HandlerFunc(checkPassword))))

	log.Fatal(http.ListenAndServe(":8080", mux))
}

// checkPassword answers 401 to a wrong password (a failure: it counts) and
// 200 to a right one (the account's counter is cleared).
func checkPassword(w http.ResponseWriter, r *http.Request) {
	if r.PostFormValue("username") != "alice" || r.PostFormValue("password") != "wonderland" {
		http.Error(w, "wrong username or password", http.StatusUnauthorized)
		return
	}
	w.Write([]byte("welcome\n"))
}
