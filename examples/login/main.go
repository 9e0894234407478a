// Command login shows ratekit's lockout from inside a handler: a
// verification-code endpoint that records every attempt before it looks at
// the code (one atomic step, so parallel guesses cannot slip past the
// allowance), and clears the counter when the code is right.
//
//	go run ./examples/login -addr 127.0.0.1:8081
//	curl -i -d 'account=alice&code=000000' 127.0.0.1:8081/verify
//
// The right code for every account is 424242. Three wrong codes in ten
// minutes block the account for ten minutes; the fourth answer is 429
// TOO_MANY_ATTEMPTS with Retry-After, even with the right code.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	h, err := newHandler(memstore.New())
	if err != nil {
		fmt.Fprintln(os.Stderr, "login:", err)
		os.Exit(1)
	}
	slog.Info("ratekit login example: in-process store", "addr", *addr)
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "login:", err)
		os.Exit(1)
	}
}

// newHandler serves POST /verify over a lockout in store.
func newHandler(store ratekit.Store) (http.Handler, error) {
	lo, err := lockout.New(store, lockout.Config{Name: "verify", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 3, Window: 10 * time.Minute, Block: 10 * time.Minute},
	}})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /verify", func(w http.ResponseWriter, r *http.Request) {
		account := r.PostFormValue("account")
		// 1. record the attempt; a blocked account, or one this attempt takes past
		//    3 in 10 minutes, gets 429 (503 when the store is down) and no code check
		d, err := lo.Attempt(r.Context(), account)
		if e := lo.Response(d, err); e != nil {
			e.ServeHTTP(w, r)
			return
		}
		// 2. a wrong code stays counted
		if r.PostFormValue("code") != "424242" {
			http.Error(w, "wrong code", http.StatusUnprocessableEntity)
			return
		}
		// 3. the right code clears the account's attempts
		if err := lo.Reset(r.Context(), account); err != nil {
			slog.Warn("lockout", "error", err)
		}
		fmt.Fprintln(w, "verified")
	})
	return mux, nil
}
