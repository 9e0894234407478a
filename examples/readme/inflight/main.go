// Command inflight serves a text generator that runs at most 4 requests per API
// key at once and charges each key the tokens its replies really use, 100,000 an
// hour, counted in process.
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// maxTokens is the most one reply may use: what each request reserves.
const maxTokens = 1000

func main() {
	limiter, err := ratekit.New(memstore.New(),
		ratekit.InFlight(4).Named("busy"),                       // 4 requests at once per key
		ratekit.FixedWindow(100_000, time.Hour).Named("tokens")) // 100,000 tokens an hour per key
	if err != nil {
		log.Fatal(err)
	}
	generate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply, used := complete(r.FormValue("prompt"))
		// Charge the tokens the reply used: the rest of the reserve goes back.
		if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), used); err != nil {
			log.Print(err) // the charge stays at maxTokens
		}
		fmt.Fprintf(w, "%s (%d tokens)\n", reply, used)
	})
	limit := ratekit.Middleware(limiter, ratekit.ByHeader("X-API-Key"),
		ratekit.WithCost(maxTokens), // reserved when a request is admitted
		ratekit.WithSettle(),        // settled by the handler
		ratekit.WithCountIf(func(status int) bool { return status < 500 })) // a server error costs nothing

	ln, err := net.Listen("tcp", "127.0.0.1:8080") // this machine only
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, limit(generate)))
}

// complete stands in for a language model: it takes a second or so to answer
// prompt in at most maxTokens tokens, and says how many it used.
func complete(prompt string) (string, int64) {
	words := strings.Fields(prompt)
	tokens := min(int64(len(words))*120, maxTokens)
	time.Sleep(time.Duration(tokens) * time.Millisecond)
	return strings.TrimSpace(strings.Repeat("bla ", len(words))), tokens
}
