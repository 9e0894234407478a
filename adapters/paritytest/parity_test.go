package paritytest

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// ignored lists the response headers the comparison leaves out, and why.
// Nothing framework-specific is needed: every adapter writes its headers and
// bodies through ratekit.Guard, as ratekit.Middleware does through the same
// core, and no framework adds headers of its own to these responses.
var ignored = map[string]string{
	"Date":           "fasthttp (Fiber) stamps every response; net/http's httptest.ResponseRecorder does not",
	"Content-Length": "fasthttp (Fiber) always sends it; httptest.ResponseRecorder only reports what the handler set",
}

// The two clients reach the app through trusted proxies; only every line of
// X-Forwarded-For, read right to left, names client A as 198.51.100.9.
var (
	clientA = []string{"203.0.113.7", "198.51.100.9, 192.0.2.50"}
	clientB = []string{"198.51.100.10"}
)

type step struct {
	advance time.Duration // fake time to pass before the request
	path    string
	xff     []string
	apiKey  string // X-Api-Key, when set
	status  int    // expected on every framework
	check   map[string]string
}

var script = []step{
	{path: "/api/a", xff: clientA, status: 200, check: map[string]string{
		"X-Ratelimit-Remaining": "2", "X-Ratelimit-Reset": "1800000060", "Ratelimit": `"api";r=2;t=60`}},
	{path: "/api/heavy", xff: clientA, status: 200, check: map[string]string{"X-Ratelimit-Remaining": "0"}}, // cost 2
	{path: "/api/a", xff: clientA, status: 429, check: map[string]string{"Retry-After": "60", "Cache-Control": "no-store"}},
	{path: "/api/health", xff: clientA, status: 200, check: map[string]string{"X-Ratelimit-Limit": "", "Ratelimit": ""}}, // skipped
	{path: "/api/a", xff: clientB, status: 200, check: map[string]string{"X-Ratelimit-Remaining": "2"}},
	{advance: 61 * time.Second, path: "/api/heavy", xff: clientA, status: 200, check: map[string]string{
		"X-Ratelimit-Remaining": "1", "X-Ratelimit-Reset": "1800000121"}},
	{path: "/api/heavy", xff: clientA, status: 429, check: map[string]string{"Retry-After": "60"}}, // 2 > 1 left
	{path: "/api/huge", xff: clientA, status: 429, check: map[string]string{"Retry-After": ""}},    // 5 > quota: never
	{path: "/open/x", xff: clientA, status: 200, check: map[string]string{"X-Ratelimit-Limit": ""}},
	{path: "/closed/x", xff: clientA, status: 503, check: map[string]string{"Retry-After": "1"}},
	{path: "/keyed/x", xff: clientA, apiKey: "k1", status: 200, check: map[string]string{"Ratelimit": `"keyed";r=1;t=1`}},
	{path: "/keyed/x", xff: clientA, status: 400, check: map[string]string{"Ratelimit": ""}}, // no key
	{path: "/login/x", xff: clientA, status: 200},
	{path: "/login/x", xff: clientA, status: 429, check: map[string]string{
		"Content-Type": "application/problem+json", "Retry-After": "900", "X-Ratelimit-Limit": ""}},
}

// TestParity runs the script through every framework, each against its own
// memstore on its own fake clock, and requires identical status codes,
// headers (but those in ignored) and bodies.
func TestParity(t *testing.T) {
	var want []result
	var wantErrors int64
	for _, tg := range targets {
		f := newFixture(t)
		do := tg.build(f)
		var got []result
		for i, s := range script {
			f.clock.Advance(s.advance)
			r := do(t, request(s))
			got = append(got, r)
			if r.status != s.status {
				t.Errorf("%s step %d %s: status %d, want %d; body %s", tg.name, i+1, s.path, r.status, s.status, r.body)
			}
			for k, v := range s.check {
				if g := r.header.Get(k); g != v {
					t.Errorf("%s step %d %s: %s %q, want %q", tg.name, i+1, s.path, k, g, v)
				}
			}
		}
		if want == nil {
			want, wantErrors = got, f.errors.Load()
			if wantErrors != 3 {
				t.Errorf("%s: %d errors reported, want 3 (store down twice, key missing once)", tg.name, wantErrors)
			}
			continue
		}
		for i := range script {
			if d := diff(want[i], got[i]); d != "" {
				t.Errorf("%s step %d %s differs from %s:\n%s", tg.name, i+1, script[i].path, targets[0].name, d)
			}
		}
		if n := f.errors.Load(); n != wantErrors {
			t.Errorf("%s: %d errors reported, %s reported %d", tg.name, n, targets[0].name, wantErrors)
		}
	}
}

func request(s step) *http.Request {
	req := httptest.NewRequest(http.MethodGet, s.path, nil)
	req.RemoteAddr = "192.0.2.1:4321" // a trusted proxy
	req.Header["X-Forwarded-For"] = s.xff
	if s.apiKey != "" {
		req.Header.Set("X-Api-Key", s.apiKey)
	}
	return req
}

// diff describes how b differs from a: status, body, and every header not in
// ignored, with all its values in order.
func diff(a, b result) string {
	var out []string
	if a.status != b.status {
		out = append(out, fmt.Sprintf("  status %d != %d", a.status, b.status))
	}
	if a.body != b.body {
		out = append(out, fmt.Sprintf("  body %q != %q", a.body, b.body))
	}
	names := map[string]bool{}
	for k := range a.header {
		names[k] = true
	}
	for k := range b.header {
		names[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if _, skip := ignored[k]; skip {
			continue
		}
		if av, bv := a.header[k], b.header[k]; !slices.Equal(av, bv) {
			out = append(out, fmt.Sprintf("  %s %q != %q", k, av, bv))
		}
	}
	return strings.Join(out, "\n")
}

// TestHungStoreIsBounded: on every framework, a request whose store never
// answers is let through (fail open) within the timeout (100 ms) + 50 ms,
// with the same response everywhere.
func TestHungStoreIsBounded(t *testing.T) {
	var first result
	for i, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			f := newFixture(t)
			do := target.build(f)
			var slowest time.Duration
			for range 10 {
				start := time.Now()
				got := do(t, request(step{path: "/hung/x"}))
				elapsed := time.Since(start)
				slowest = max(slowest, elapsed)
				if got.status != 200 || elapsed < 90*time.Millisecond {
					t.Fatalf("%d after %v, want 200 (fail open) after the 100 ms timeout", got.status, elapsed)
				}
				if i == 0 {
					first = got
				} else if d := diff(first, got); d != "" {
					t.Fatalf("differs from net/http: %s", d)
				}
			}
			if slowest > ratekit.DefaultTimeout+50*time.Millisecond {
				t.Fatalf("slowest request %v, want ≤ 150 ms", slowest)
			}
			if f.errors.Load() != 10 {
				t.Fatalf("%d errors reported, want 10", f.errors.Load())
			}
		})
	}
}
