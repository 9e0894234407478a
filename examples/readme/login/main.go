// Command login is the README's login program: POST /login takes a JSON body,
// {"username":"alice","password":"wonderland"}, and is protected per account
// and per client IP by lockouts that count failed attempts only.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
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
		account.Middleware(byJSONUsername)(http.HandlerFunc(checkPassword))))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

// byJSONUsername is a ratekit.KeyFunc for a JSON body: it keys the request by
// its "username" field, trimmed and lower-cased as ratekit.ByFormValue does,
// and puts the body back for the handler. A body it cannot read (over 64 KiB,
// or broken off), one that is not JSON, or an empty username is an error that
// wraps ratekit.ErrEmptyKey: the middleware answers 400 and counts nothing.
func byJSONUsername(r *http.Request) (string, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10)) // at most 64 KiB
	if err != nil {
		return "", fmt.Errorf("%w: reading the body: %v", ratekit.ErrEmptyKey, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body)) // the handler reads it again
	var fields struct {
		Username string `json:"username"` // the one field the key needs
	}
	if err := json.Unmarshal(body, &fields); err != nil {
		return "", fmt.Errorf("%w: decoding the body: %v", ratekit.ErrEmptyKey, err)
	}
	username := strings.ToLower(strings.TrimSpace(fields.Username))
	if username == "" {
		return "", fmt.Errorf("%w: the body has no username", ratekit.ErrEmptyKey)
	}
	return username, nil
}

// checkPassword answers 401 to a wrong password (a failure: it counts) and
// 200 to a right one (the account's counter is cleared).
func checkPassword(w http.ResponseWriter, r *http.Request) {
	var login struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(r.Body).Decode(&login); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if strings.ToLower(strings.TrimSpace(login.Username)) != "alice" || login.Password != "wonderland" {
		http.Error(w, "wrong username or password", http.StatusUnauthorized)
		return
	}
	w.Write([]byte("welcome\n"))
}
