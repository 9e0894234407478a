package levels_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestInFlightLevels: a global and a per-tenant InFlight limit hold their
// slots while the handler runs and give them back when it returns.
func TestInFlightLevels(t *testing.T) {
	mw, err := levels.New(levels.Config{
		Store:     memstore.New(),
		Tenant:    ratekit.ByHeader("X-Tenant"),
		Global:    []ratekit.Limit{ratekit.InFlight(3).Named("all")},
		PerTenant: []ratekit.Limit{ratekit.InFlight(1).Named("one")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var inner []int
	var h http.Handler
	h = mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Nested") == "" { // while this request holds its slots
			inner = append(inner, serve(h, "a", "1"), serve(h, "b", "1"), serve(h, "c", "1"), serve(h, "d", "1"))
		}
	}))
	if code := serve(h, "a", ""); code != http.StatusOK {
		t.Fatalf("first request: %d", code)
	}
	// while a's request runs: a's one tenant slot is taken; b, c and d
	// (one after another) find a global slot free each time
	want := []int{429, 200, 200, 200}
	for i := range want {
		if inner[i] != want[i] {
			t.Fatalf("nested requests: %v, want %v", inner, want)
		}
	}
	for _, tenant := range []string{"a", "b"} { // every slot back
		if code := serve(h, tenant, ""); code != http.StatusOK {
			t.Fatalf("after: %s got %d", tenant, code)
		}
	}
}

func serve(h http.Handler, tenant, nested string) int {
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("X-Tenant", tenant)
	if nested != "" {
		req.Header.Set("X-Nested", nested)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}
