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
	text, lines := scrape(t, srv.URL)
	want := []string{
		"# TYPE ratekit_decisions_total counter",
		"# TYPE ratekit_near_limit_total counter",
		"# TYPE ratekit_store_errors_total counter",
		"# TYPE ratekit_fallback_decisions_total counter",
		"# TYPE ratekit_fallback_active gauge",
		"# TYPE ratekit_store_latency_seconds histogram",
		`ratekit_store_latency_seconds_bucket{policy="api",le="+Inf"} 3`,
	}
	hasLines(t, lines, append(want, exposition(w)...))
	for _, s := range observetest.Subjects {
		if strings.Contains(text, s) {
			t.Errorf("the subject %q appears in the scrape", s)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

// TestScrapeInFlight: while two requests hold InFlight slots, a scrape
// reads ratekit_inflight at 2 for each limit; once they have returned, at
// 0; and never a "released" outcome.
func TestScrapeInFlight(t *testing.T) {
	m, reg := newMetrics(t)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	held, release := observetest.HoldInFlight(t, m)
	text, lines := scrape(t, srv.URL)
	hasLines(t, lines, append(exposition(held), "# TYPE ratekit_inflight gauge",
		`ratekit_inflight{policy="conc"} 2`, `ratekit_inflight{policy="all"} 2`))
	back := release()
	text2, lines := scrape(t, srv.URL)
	hasLines(t, lines, append(exposition(back), `ratekit_inflight{policy="conc"} 0`, `ratekit_inflight{policy="all"} 0`))
	for _, txt := range []string{text, text2} {
		if strings.Contains(txt, "released") {
			t.Errorf("a scrape shows a released outcome:\n%s", txt)
		}
	}
}

// scrape gets url as Prometheus would and returns the text and its lines.
func scrape(t *testing.T, url string) (string, map[string]bool) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("scrape: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(body), "\n") {
		lines[l] = true
	}
	return string(body), lines
}

// exposition returns the lines of the exposition format that hold w's
// series.
func exposition(w observetest.Want) []string {
	var out []string
	for series, v := range format.Render(w) {
		out = append(out, strings.TrimSuffix(series, "{}")+" "+strconv.FormatFloat(v, 'g', -1, 64))
	}
	return out
}

// hasLines fails t for each of want that lines lacks.
func hasLines(t *testing.T, lines map[string]bool, want []string) {
	t.Helper()
	for _, l := range want {
		if !lines[l] {
			t.Errorf("scrape lacks the line %q", l)
		}
	}
}
