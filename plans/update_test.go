package plans_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/plans"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestUpdatePlans: a Middleware built before Update serves the new plans
// from the next request on: new numbers keep the counts, a new plan is
// served, a removed one is an unknown plan (400), and a bad Update changes
// nothing.
func TestUpdatePlans(t *testing.T) {
	p, err := plans.New(memstore.New(), tiers(2, 4))
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{"k-free": "free", "k-pro": "pro", "k-team": "team"}
	h := p.Middleware(byKey(owners), ratekit.ByHeader("X-Api-Key"))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	call := func(key string) (int, string) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Api-Key", key)
		h.ServeHTTP(w, r)
		return w.Code, w.Header().Get("RateLimit-Policy")
	}
	for range 2 {
		if code, _ := call("k-free"); code != 200 {
			t.Fatalf("free: %d", code)
		}
	}
	if code, _ := call("k-free"); code != 429 {
		t.Fatalf("free past its quota: %d", code)
	}
	if code, _ := call("k-team"); code != 400 {
		t.Fatalf("team before it exists: %d, want 400", code)
	}
	before, _ := p.Limiter("free")

	next := tiers(5, 4)
	next["team"] = []ratekit.Limit{ratekit.FixedWindow(1, time.Minute).Named("team")}
	delete(next, "pro")
	if err := p.Update(next); err != nil {
		t.Fatal(err)
	}
	if after, _ := p.Limiter("free"); after != before {
		t.Fatal("a plan that stays must keep its Limiter")
	}
	for i := range 3 { // 2 of 5 used: exactly 3 more
		if code, policy := call("k-free"); code != 200 || policy != `"free";q=5;w=60` {
			t.Fatalf("free call %d after the raise: %d %s", i, code, policy)
		}
	}
	if code, _ := call("k-free"); code != 429 {
		t.Fatalf("free past its new quota: %d", code)
	}
	if code, _ := call("k-team"); code != 200 {
		t.Fatalf("new plan team: %d", code)
	}
	if code, _ := call("k-pro"); code != 400 {
		t.Fatalf("removed plan pro: %d, want 400", code)
	}
	if got := p.Names(); len(got) != 2 || got[0] != "free" || got[1] != "team" {
		t.Fatalf("names %v", got)
	}

	bad := map[string][]ratekit.Limit{"free": {ratekit.FixedWindow(0, time.Minute).Named("free")}, "x y": nil}
	if err := p.Update(bad); err == nil {
		t.Fatal("bad plans accepted")
	}
	if code, policy := call("k-team"); code != 429 || policy != `"team";q=1;w=60` {
		t.Fatalf("after a refused Update, team: %d %s (its plan must stand)", code, policy)
	}
	if err := p.Update(map[string][]ratekit.Limit{"free": {ratekit.InFlight(2).Named("slots")}, "team": next["team"]}); err == nil {
		t.Fatal("an InFlight limit added to a plan without one: accepted")
	}
}

// TestUpdatePlansConcurrent: requests during Updates see one version of
// a plan or the other, never an error.
func TestUpdatePlansConcurrent(t *testing.T) {
	pro := func(n int64) map[string][]ratekit.Limit {
		return map[string][]ratekit.Limit{"pro": {ratekit.FixedWindow(n, time.Minute).Named("pro"), ratekit.FixedWindow(n, time.Hour).Named("hourly")}}
	}
	p, err := plans.New(memstore.New(), pro(1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	h := p.Middleware(byKey(map[string]string{"k": "pro"}), ratekit.ByHeader("X-Api-Key"))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				w := httptest.NewRecorder()
				r := httptest.NewRequest("GET", "/", nil)
				r.Header.Set("X-Api-Key", "k")
				h.ServeHTTP(w, r)
				got := w.Header().Get("RateLimit-Policy")
				if w.Code != 200 || got != `"pro";q=1000000;w=60, "hourly";q=1000000;w=3600` && got != `"pro";q=2000000;w=60, "hourly";q=2000000;w=3600` {
					t.Errorf("goroutine %d: %d %q", g, w.Code, got)
					return
				}
			}
		}()
	}
	for i := range 200 {
		if err := p.Update(pro(int64(1_000_000 * (2 - i%2)))); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}
