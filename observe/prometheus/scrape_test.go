package ratekitprom_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekit/ratekit/observe/observetest"
)

// TestScrapeHasNoSubjects drives decisions about several subjects (IPs, an
// API key, a lockout account; allowed, denied, store error, invalid),
// scrapes the registry over HTTP as Prometheus would, and finds the exact
// series, a line for each, and no subject anywhere in the text.
func TestScrapeHasNoSubjects(t *testing.T) {
	m, reg := newMetrics(t)
	w := observetest.DriveSubjects(t, m)
	check(t, reg, w)

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
	want := []string{
		"# TYPE ratekit_decisions_total counter",
		"# TYPE ratekit_near_limit_total counter",
		"# TYPE ratekit_store_errors_total counter",
		"# TYPE ratekit_fallback_decisions_total counter",
		"# TYPE ratekit_fallback_active gauge",
		"# TYPE ratekit_store_latency_seconds histogram",
		`ratekit_store_latency_seconds_bucket{policy="api",le="+Inf"} 3`,
	}
	for series, v := range format.Render(w) {
		want = append(want, strings.TrimSuffix(series, "{}")+" "+strconv.FormatFloat(v, 'g', -1, 64))
	}
	for _, l := range want {
		if !lines[l] {
			t.Errorf("scrape lacks the line %q", l)
		}
	}
	for _, s := range observetest.Subjects {
		if strings.Contains(text, s) {
			t.Errorf("the subject %q appears in the scrape", s)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}
