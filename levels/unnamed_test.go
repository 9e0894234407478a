package levels_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestUnnamedTenantLimitWithEndpoints: an unnamed per-tenant limit beside
// an endpoint's limits builds and limits. Levels runs several Limiters over
// the tenant's limits, which share its counters by design.
func TestUnnamedTenantLimitWithEndpoints(t *testing.T) {
	mw, err := levels.New(levels.Config{
		Store:     memstore.New(),
		Tenant:    ratekit.ByHeader("X-Tenant"),
		PerTenant: []ratekit.Limit{ratekit.FixedWindow(4, time.Minute)},
		Endpoints: []levels.Endpoint{{Pattern: "POST /login", Limits: []ratekit.Limit{ratekit.FixedWindow(2, time.Minute).Named("login")}}},
	})
	if err != nil {
		t.Fatalf("levels.New: %v", err)
	}
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	send := func(method, path string) int {
		r := httptest.NewRequest(method, path, nil)
		r.Header.Set("X-Tenant", "acme")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	var got []int
	for _, req := range [][2]string{{"POST", "/login"}, {"POST", "/login"}, {"POST", "/login"}, {"GET", "/"}, {"GET", "/"}, {"GET", "/"}} {
		got = append(got, send(req[0], req[1]))
	}
	t.Logf("codes: %v", got)
	want := []int{200, 200, 429, 200, 200, 429}
	if !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v: the endpoint allows 2 logins, the tenant 4 requests in all", got, want)
	}
}
