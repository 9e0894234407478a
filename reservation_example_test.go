package ratekit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// complete stands in for a language model: it answers prompt with at most
// maxTokens tokens and says how many it generated.
func complete(prompt string, maxTokens int64) (string, int64) {
	words := strings.Fields(prompt)
	tokens := min(int64(len(words))*120, maxTokens)
	return strings.TrimSpace(strings.Repeat("bla ", int(tokens/100))), tokens
}

// An LLM endpoint charges each API key the tokens its requests really use,
// from a budget of 10,000 tokens an hour: Middleware reserves 1,000 tokens
// (the most one reply may use) when it admits a request, and the handler
// settles the tokens the model generated, which gives back the rest.
func ExampleWithSettle() {
	const maxTokens = 1000
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(10_000, time.Hour).Named("tokens"))
	if err != nil {
		panic(err)
	}
	generate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply, used := complete(r.FormValue("prompt"), maxTokens)
		if err := ratekit.ReservationFrom(r.Context()).Settle(r.Context(), used); err != nil {
			fmt.Println("settle:", err) // the charge stays at the reserve
		}
		fmt.Fprintf(w, "%d tokens: %s", used, reply)
	})
	limit := ratekit.Middleware(limiter, ratekit.ByHeader("X-API-Key"),
		ratekit.WithCost(maxTokens), ratekit.WithSettle())
	h := limit(generate)

	for _, prompt := range []string{"hello", "write a poem about rate limits", "explain this to me in great detail please now"} {
		req := httptest.NewRequest("POST", "/generate", strings.NewReader("prompt="+prompt))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-API-Key", "team-a")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%s (at admission: %s left)\n", rec.Body, rec.Header().Get("X-RateLimit-Remaining"))
	}
	d, err := limiter.Peek(context.Background(), "team-a")
	if err != nil {
		panic(err)
	}
	fmt.Println("left:", d.Remaining)
	// Output:
	// 120 tokens: bla (at admission: 9000 left)
	// 720 tokens: bla bla bla bla bla bla bla (at admission: 8880 left)
	// 1000 tokens: bla bla bla bla bla bla bla bla bla bla (at admission: 8160 left)
	// left: 8160
}
