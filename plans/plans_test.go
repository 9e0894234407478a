package plans_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/httpcheck"
	"github.com/ratekit/ratekit/plans"
	"github.com/ratekit/ratekit/store/memstore"
)

// byKey names the plan of a request from its X-Api-Key.
func byKey(owners map[string]string) func(r *http.Request) (string, error) {
	return func(r *http.Request) (string, error) {
		key := r.Header.Get("X-Api-Key")
		if key == "" {
			return "", errors.New("no API key")
		}
		return owners[key], nil
	}
}

func tiers(free, pro int64) map[string][]ratekit.Limit {
	return map[string][]ratekit.Limit{
		"free": {ratekit.FixedWindow(free, time.Minute).Named("free")},
		"pro":  {ratekit.FixedWindow(pro, time.Minute).Named("pro"), ratekit.FixedWindow(1000, time.Hour).Named("hourly")},
	}
}

// TestTwoPlans: two API keys on two plans get their own quotas and headers;
// a request without a plan, or with an unknown one, gets 400 uncounted.
func TestTwoPlans(t *testing.T) {
	p, err := plans.New(memstore.New(), tiers(2, 4))
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{"k-free": "free", "k-pro": "pro", "k-gold": "gold"}
	srv := httptest.NewServer(p.Middleware(byKey(owners), ratekit.ByHeader("X-Api-Key"))(httpcheck.OK))
	defer srv.Close()

	statuses := func(key string, n int) (codes []int, last httpcheck.Response) {
		for range n {
			last = httpcheck.Get(t, srv.URL, "X-Api-Key", key)
			codes = append(codes, last.Status)
		}
		return codes, last
	}
	codes, last := statuses("k-free", 3)
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 {
		t.Fatalf("free: %v", codes)
	}
	if last.Header.Get("RateLimit-Policy") != `"free";q=2;w=60` || !strings.Contains(last.Body, `"policy":"free"`) {
		t.Fatalf("free denial: %v %s", last.Header, last.Body)
	}
	codes, last = statuses("k-pro", 5)
	if codes[3] != 200 || codes[4] != 429 {
		t.Fatalf("pro: %v", codes)
	}
	if last.Header.Get("RateLimit-Policy") != `"pro";q=4;w=60, "hourly";q=1000;w=3600` || !strings.Contains(last.Body, `"limit":4`) {
		t.Fatalf("pro denial: %v %s", last.Header, last.Body)
	}
	for _, key := range []string{"", "k-gold"} {
		r := httpcheck.Get(t, srv.URL, "X-Api-Key", key)
		if r.Status != 400 || r.Header.Get("RateLimit-Policy") != "" || httpcheck.Leaks(r) {
			t.Fatalf("key %q: %d %v %s", key, r.Status, r.Header, r.Body)
		}
	}
	l, _ := p.Limiter("free")
	if d, err := l.Peek(t.Context(), "k-free"); err != nil || d.Remaining != 0 {
		t.Fatalf("free's counter: %+v %v", d, err)
	}
}

// TestPlanChangeKeepsCounts: new numbers for a plan keep its counts on
// the same store (carry.Used), as the untouched plan does.
func TestPlanChangeKeepsCounts(t *testing.T) {
	store := memstore.New()
	before, err := plans.New(store, tiers(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []string{"free", "pro"} {
		l, _ := before.Limiter(plan)
		if d, _ := l.Allow(t.Context(), "subject"); !d.Allowed {
			t.Fatalf("%s: first call denied", plan)
		}
	}
	after, err := plans.New(store, tiers(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	free, _ := after.Limiter("free")
	pro, _ := after.Limiter("pro")
	if d, _ := free.Allow(t.Context(), "subject"); d.Allowed {
		t.Fatal("free's numbers did not change, its count must carry on")
	}
	if d, _ := pro.Allow(t.Context(), "subject"); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("pro's new numbers (1 to 3 after 1 used) must keep the count: %+v, want 1 remaining", d)
	}
}

// TestPlansConfigErrors: every bad plan is reported at once, naming it.
func TestPlansConfigErrors(t *testing.T) {
	_, err := plans.New(memstore.New(), map[string][]ratekit.Limit{
		"free":     {ratekit.FixedWindow(0, time.Minute).Named("free")},
		"bad name": {ratekit.FixedWindow(1, time.Minute)},
		"empty":    nil,
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`plan "free"`, `plan name "bad name"`, `plan "empty"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nlacks %s", err, want)
		}
	}
	if _, err := plans.New(memstore.New(), nil); err == nil || !strings.HasPrefix(err.Error(), "ratekit: ") {
		t.Fatalf("no plans: %v", err)
	}
}
