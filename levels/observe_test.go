package levels_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestLevelsReportEachLevel: a request through levels reports one event per
// level it was decided at, each naming that level's policy and subject.
func TestLevelsReportEachLevel(t *testing.T) {
	var got []string
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		got = append(got, e.Outcome.String()+" "+e.Policy+" "+e.Subject)
	})
	mw, err := levels.New(levels.Config{
		Store:     memstore.New(),
		Tenant:    ratekit.ByHeader("X-Tenant"),
		Global:    []ratekit.Limit{ratekit.FixedWindow(100, time.Hour).Named("global")},
		PerTenant: []ratekit.Limit{ratekit.FixedWindow(1, time.Hour).Named("tenant")},
	}, ratekit.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 2 {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Tenant", "acme")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	want := []string{"allowed global global", "allowed tenant acme", "allowed global global", "denied tenant acme"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
}
