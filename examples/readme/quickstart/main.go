// Command quickstart is the first program of the README: one limit, per
// client IP, on the in-process store.
package main

import (
	"log"
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	// 100 requests per minute per client IP, kept in this process.
	limiter, err := ratekit.New(memstore.New(),
		ratekit.FixedWindow(100, time.Minute).Named("api"))
	if err != nil {
		log.Fatal(err) // a bad limit is reported here, never at request time
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\n"))
	})

	limit := ratekit.Middleware(limiter, ratekit.ByIP())
	log.Fatal(http.ListenAndServe(":8080", limit(mux)))
}
