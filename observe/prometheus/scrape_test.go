package ratekitprom_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
)

// subjects are every key the scrape test decides about; none may appear in
// the exposition.
var subjects = []string{"192.0.2.1", "203.0.113.9", "alice", "bob@example.com"}

// TestScrapeHasNoSubjects drives decisions about several subjects (IPs, an
// API key, a lockout account; allowed, denied, store error, invalid),
// scrapes the registry over HTTP as Prometheus would, and finds the exact
// series lines and no subject anywhere in the text.
func TestScrapeHasNoSubjects(t *testing.T) {
	m, reg := newMetrics(t)
	opt := ratekit.WithObserver(m)
	store := memstore.New()
	api := ratekit.Middleware(limiter(t, store, ratekit.FixedWindow(1, time.Minute).Named("api")), ratekit.ByIP(), opt)(okHandler)
	keyed := ratekit.Middleware(limiter(t, store, ratekit.FixedWindow(5, time.Minute).Named("keyed")), ratekit.ByHeader("X-Api-Key"), opt)(okHandler)
	broken := ratekit.Middleware(limiter(t, failingStore{}, ratekit.FixedWindow(5, time.Minute).Named("down")), ratekit.ByIP(), opt)(okHandler)
	send(api, 2)                                                                 // 192.0.2.1: allowed, denied
	send(api, 1, func(r *http.Request) { r.RemoteAddr = "203.0.113.9:4000" })    // allowed
	send(keyed, 1, func(r *http.Request) { r.Header.Set("X-Api-Key", "alice") }) // allowed
	send(keyed, 1)                                                               // invalid: no key
	send(broken, 1)                                                              // error
	lo, err := lockout.New(store, lockout.Config{Name: "login", Observer: m,
		Windows: []lockout.Window{{Scope: "temp", Attempts: 1, Window: time.Minute, Block: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, _ = lo.Attempt(context.Background(), "bob@example.com") // allowed, denied
	}

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("scrape: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		lines[l] = true
	}
	for _, l := range []string{
		"# TYPE ratekit_decisions_total counter",
		"# TYPE ratekit_near_limit_total counter",
		"# TYPE ratekit_store_errors_total counter",
		"# TYPE ratekit_fallback_decisions_total counter",
		"# TYPE ratekit_fallback_active gauge",
		"# TYPE ratekit_store_latency_seconds histogram",
		`ratekit_decisions_total{outcome="allowed",policy="api"} 2`,
		`ratekit_decisions_total{outcome="denied",policy="api"} 1`,
		`ratekit_decisions_total{outcome="allowed",policy="keyed"} 1`,
		`ratekit_decisions_total{outcome="invalid",policy="keyed"} 1`,
		`ratekit_decisions_total{outcome="error",policy="down"} 1`,
		`ratekit_decisions_total{outcome="allowed",policy="login"} 1`,
		`ratekit_decisions_total{outcome="denied",policy="login"} 1`,
		`ratekit_near_limit_total{policy="api"} 2`,
		`ratekit_near_limit_total{policy="login"} 1`,
		`ratekit_store_errors_total{policy="down"} 1`,
		`ratekit_fallback_active 0`,
		`ratekit_store_latency_seconds_count{policy="api"} 3`,
		`ratekit_store_latency_seconds_count{policy="keyed"} 1`,
		`ratekit_store_latency_seconds_count{policy="down"} 1`,
		`ratekit_store_latency_seconds_count{policy="login"} 2`,
		`ratekit_store_latency_seconds_bucket{policy="api",le="+Inf"} 3`,
	} {
		if !lines[l] {
			t.Errorf("scrape lacks the line %q", l)
		}
	}
	for _, s := range subjects {
		if strings.Contains(text, s) {
			t.Errorf("the subject %q appears in the scrape", s)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}
