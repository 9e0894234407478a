package levels_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/memstore"
)

// While the service-wide limit is exceeded, only tenants in good standing
// pass; a tenant whose requests keep being denied loses its standing.
func ExampleNew() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	store := memstore.New(memstore.WithClock(func() time.Time { return now }))
	mw, err := levels.New(levels.Config{
		Store:      store,
		Tenant:     ratekit.ByHeader("X-Tenant"),
		Global:     []ratekit.Limit{ratekit.FixedWindow(10, time.Minute).Named("global")},
		Endpoints:  []levels.Endpoint{{Pattern: "POST /login", Limits: []ratekit.Limit{ratekit.FixedWindow(1, time.Minute).Named("login")}}},
		Reputation: store, // memstore keeps reputations too
	})
	if err != nil {
		panic(err)
	}
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	do := func(method, path, tenant string) int {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("X-Tenant", tenant)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}

	for range 10 { // 1 login passes, 9 are denied: violations
		do("POST", "/login", "bot")
	}
	r, _ := store.Reputation(context.Background(), "bot", reputation.DefaultPolicy())
	fmt.Printf("bot: score %.2f after %d violations\n", r.Score, r.Violations)
	// the global limit (10) is used up: the gate decides by reputation
	fmt.Println("alice:", do("GET", "/items", "alice"))
	fmt.Println("bot:", do("GET", "/items", "bot"))
	// Output:
	// bot: score 0.00 after 9 violations
	// alice: 200
	// bot: 429
}
