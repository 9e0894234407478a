// Command login is the README's login program: POST /login takes a JSON body,
// {"username":"alice","password":"wonderland"}, and is protected per account
// and per client IP by lockouts that count failed attempts only. A
// successful login gets a device cookie, signed with the 32 or more bytes
// of $DEVICE_KEY (hex), with which its owner gets in while the account is
// locked for everyone else.
package main

import (
	"encoding/hex"
	"encoding/json"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	store := memstore.New()
	mux := http.NewServeMux()
	deviceKey, err := hex.DecodeString(os.Getenv("DEVICE_KEY")) // e.g. openssl rand -hex 32
	if err != nil {
		log.Fatal(err)
	}
	account, err := lockout.New(store, lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute},
		{Scope: "long", Attempts: 20, Window: 24 * time.Hour, Block: 24 * time.Hour},
	}, Devices: &lockout.Devices{Keys: [][]byte{deviceKey}}}) // trusted devices
	if err != nil {
		log.Fatal(err)
	}
	perIP, err := lockout.New(store, lockout.Config{Name: "login-ip", Windows: []lockout.Window{
		{Scope: "ip", Attempts: 50, Window: time.Hour, Block: time.Hour},
	}})
	if err != nil {
		log.Fatal(err)
	}
	// The per-IP lockout also counts what never reaches the password check.
	ipFailures := lockout.FailureStatuses(http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity,
		http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests)
	username := bodykey.JSONField("username") // trusted devices pass the per-IP lockout
	mux.Handle("POST /login", perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess(), ipFailures, lockout.SkipTrusted(account, username))(
		account.Middleware(username)(http.HandlerFunc(checkPassword))))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

// checkPassword answers 401 to a wrong password (a failure: it counts) and
// 200 to a right one, which it reports to the lockout (LoggedIn): the
// account's counter is cleared and the device trusted (its cookie set).
func checkPassword(w http.ResponseWriter, r *http.Request) {
	var login struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(r.Body).Decode(&login); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	account := strings.ToLower(strings.TrimSpace(login.Username)) // as bodykey.JSONField reads it
	if account != "alice" || login.Password != "wonderland" {
		http.Error(w, "wrong username or password", http.StatusUnauthorized)
		return
	}
	if err := lockout.LoggedIn(r.Context(), account); err != nil {
		log.Print(err) // the login stands; e.g. lockout.ErrTooManyDevices
	}
	w.Write([]byte("welcome\n"))
}
