package paritytest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
)

// wantMetrics are the series the script leaves, one /hung/x request after
// it, on every framework. "api" (quota 3): steps 1, 2, 5, 6 allowed (step 2
// leaves 0: near limit), 3, 7, 8 denied, /open, /closed and /hung store
// errors (the Limiters on the broken and hung stores name their limit "api"
// too); the health check is skipped and never observed. "keyed": one
// allowed, one without a key (invalid, no store asked). "login" (quota 1):
// allowed leaving 0 (near limit), then denied. Latency: every decision that
// asked a store.
var wantMetrics = map[string]float64{
	`ratekit_decisions_total{outcome="allowed",policy="api"}`:      4,
	`ratekit_decisions_total{outcome="denied",policy="api"}`:       3,
	`ratekit_decisions_total{outcome="error",policy="api"}`:        3,
	`ratekit_decisions_total{outcome="allowed",policy="keyed"}`:    1,
	`ratekit_decisions_total{outcome="invalid",policy="keyed"}`:    1,
	`ratekit_decisions_total{outcome="allowed",policy="login"}`:    1,
	`ratekit_decisions_total{outcome="denied",policy="login"}`:     1,
	`ratekit_near_limit_total{policy="api"}`:                       1,
	`ratekit_near_limit_total{policy="login"}`:                     1,
	`ratekit_store_errors_total{policy="api"}`:                     3,
	`ratekit_store_latency_seconds_count{policy="api"}`:            10,
	`ratekit_store_latency_seconds_count{policy="keyed"}`:          1,
	`ratekit_store_latency_seconds_count{policy="login"}`:          2,
	`ratekit_store_latency_seconds_bucket{policy="api",le="0.1"}`:  9, // all but the hung call
	`ratekit_store_latency_seconds_bucket{policy="api",le="0.25"}`: 10,
	`ratekit_fallback_active`:                                      0,
}

// TestMetricsParity runs the script, then one request to a store that never
// answers, through every framework with a Prometheus observer, and requires
// the same series, with exactly the values of wantMetrics (zeros left out),
// from each. No subject appears in the exposition.
func TestMetricsParity(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			f := newFixture(t)
			m, err := ratekitprom.New()
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(m)
			f.obs = m
			do := tg.build(f)
			for _, s := range script {
				f.clock.Advance(s.advance)
				do(t, request(s))
			}
			if got := do(t, request(step{path: "/hung/x", xff: clientA})); got.status != 200 {
				t.Fatalf("/hung/x: %d, want 200 (fail open)", got.status)
			}
			text := expose(t, reg)
			got := map[string]float64{}
			for _, line := range strings.Split(text, "\n") {
				var name string
				var v float64
				if line == "" || line[0] == '#' {
					continue
				}
				if _, err := fmt.Sscan(line, &name, &v); err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
				_, listed := wantMetrics[name]
				if v != 0 && (listed || !strings.Contains(name, "_bucket") && !strings.Contains(name, "_sum")) {
					got[name] = v
				}
			}
			for k, v := range wantMetrics {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			for k, v := range got {
				if _, ok := wantMetrics[k]; !ok {
					t.Errorf("unexpected series %s = %v", k, v)
				}
			}
			for _, subject := range []string{"198.51.100.9", "198.51.100.10", "203.0.113.7", "192.0.2.", "k1"} {
				if strings.Contains(text, subject) {
					t.Errorf("the subject %q appears in the exposition", subject)
				}
			}
		})
	}
}

// expose scrapes reg as Prometheus would, in the text format.
func expose(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}
