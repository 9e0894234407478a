package ratekit_test

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
)

// parseProblem reads an RFC 9457 problem without the kit's types: a JSON
// object whose type is an absolute URI and whose status is the response's.
func parseProblem(t *testing.T, r reply) map[string]any {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var p map[string]any
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("%v: %q", err, r.Body)
	}
	u, err := url.Parse(p["type"].(string))
	if err != nil || !u.IsAbs() {
		t.Fatalf("type %q is not an absolute URI", p["type"])
	}
	if s, _ := p["status"].(json.Number).Int64(); int(s) != r.Status {
		t.Fatalf("status member %v, response %d", p["status"], r.Status)
	}
	if _, ok := p["title"].(string); !ok {
		t.Fatalf("no title: %q", r.Body)
	}
	return p
}

// policyNames returns the item names of a RateLimit-Policy field, a
// structured-field list of strings with parameters.
func policyNames(field string) []string {
	var names []string
	for _, item := range strings.Split(field, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(item), ";")
		names = append(names, strings.Trim(name, `"`))
	}
	return names
}

// TestProblemTypes: a 429 is the IETF quota-exceeded problem naming the
// limits that refused the request (each a policy of RateLimit-Policy); a
// fail-closed 503 is temporary-reduced-capacity; a 400 is about:blank.
func TestProblemTypes(t *testing.T) {
	problem := ratekit.WithRenderer(response.Problem)
	l := newLimiter(t, ratekit.FixedWindow(1, time.Hour).Named("hourly"),
		ratekit.FixedWindow(5, time.Hour).Named("roomy"), ratekit.FixedWindow(1, time.Minute).Named("minute"))
	srv := serve(t, l, ratekit.ByIP(), problem)
	get(t, srv.URL)
	r := get(t, srv.URL)
	p := parseProblem(t, r)
	if p["type"] != "https://iana.org/assignments/http-problem-types#quota-exceeded" || r.Status != 429 {
		t.Fatalf("%d %v", r.Status, p)
	}
	var got []string
	for _, v := range p["violated-policies"].([]any) {
		got = append(got, v.(string))
	}
	if want := []string{"hourly", "minute"}; !reflect.DeepEqual(got, want) { // the binding (longest wait) first
		t.Fatalf("violated-policies %v, want %v", got, want)
	}
	declared := policyNames(r.Header.Get("RateLimit-Policy"))
	for _, v := range got {
		if !strings.Contains(strings.Join(declared, "\x00")+"\x00", v+"\x00") {
			t.Fatalf("violated policy %q is not in RateLimit-Policy %v", v, declared)
		}
	}

	broken, _ := ratekit.New(failingStore{}, ratekit.FixedWindow(1, time.Minute).Named("down"))
	r = get(t, serve(t, broken, ratekit.ByIP(), problem, ratekit.WithErrorPolicy(ratekit.FailClosed)).URL)
	if p := parseProblem(t, r); r.Status != 503 || p["type"] != "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity" ||
		p["violated-policies"] != nil || leaks(r) {
		t.Fatalf("%d %v", r.Status, p)
	}

	r = get(t, serve(t, l, ratekit.ByHeader("X-Key"), problem).URL)
	if p := parseProblem(t, r); r.Status != 400 || p["type"] != "about:blank" {
		t.Fatalf("%d %v", r.Status, p)
	}
}

// TestBlockProblem: the denials of a limit with a penalty block, the one
// that starts the block (whose Retry-After is the block's) and those during
// it, are the IETF abnormal-usage-detected problem; the same limit without a
// block gives quota-exceeded.
func TestBlockProblem(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(1, time.Minute).Named("strict").Block(time.Hour))
	srv := serve(t, l, ratekit.ByIP(), ratekit.WithRenderer(response.Problem))
	if r := get(t, srv.URL); r.Status != 200 {
		t.Fatalf("first request: %d", r.Status)
	}
	var types []any
	for range 2 {
		types = append(types, parseProblem(t, get(t, srv.URL))["type"])
	}
	abnormal := "https://iana.org/assignments/http-problem-types#abnormal-usage-detected"
	if want := []any{abnormal, abnormal}; !reflect.DeepEqual(types, want) {
		t.Fatalf("problem types %v, want %v", types, want)
	}
	plain := serve(t, newLimiter(t, ratekit.FixedWindow(1, time.Minute).Named("plain")), ratekit.ByIP(), ratekit.WithRenderer(response.Problem))
	get(t, plain.URL)
	if typ := parseProblem(t, get(t, plain.URL))["type"]; typ != "https://iana.org/assignments/http-problem-types#quota-exceeded" {
		t.Fatalf("without a block: %v", typ)
	}
	_, body := response.JSON(ratekit.DeniedResponse(ratekit.Decision{Limit: ratekit.FixedWindow(1, time.Minute), Blocked: true, RetryAfter: time.Second}, response.CodeRateLimited))
	if strings.Contains(string(body), "abnormal") || strings.Contains(string(body), "locked") {
		t.Fatalf("response.JSON writes the block: %s", body)
	}
}

// TestLockoutProblem: a lockout's 429 is abnormal-usage-detected and names
// the window that tripped.
func TestLockoutProblem(t *testing.T) {
	lo, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 1, Window: time.Minute, Block: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = lo.Attempt(t.Context(), "alice")
	_, body := response.Problem(lo.Response(lo.Attempt(t.Context(), "alice")))
	var p struct {
		Type     string   `json:"type"`
		Violated []string `json:"violated-policies"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Type != "https://iana.org/assignments/http-problem-types#abnormal-usage-detected" ||
		!reflect.DeepEqual(p.Violated, []string{"temp"}) {
		t.Fatalf("%v %s", err, body)
	}
}
