// Command quickstart serves 5 requests per minute per client IP, counted in process.
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	// 5 requests per minute per client IP; the 6th gets 429.
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(5, time.Minute).Named("api"))
	if err != nil {
		log.Fatal(err) // a bad limit is reported here, never at request time
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\n"))
	})
	limit := ratekit.Middleware(limiter, ratekit.ByIP())

	ln, err := net.Listen("tcp", "127.0.0.1:8080") // this machine only
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, limit(hello)))
}
