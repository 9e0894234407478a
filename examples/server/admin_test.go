package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/ratekit/ratekit/internal/redistest"
)

// TestDemoOverride: two demo instances on one Redis. An override set
// through A's admin route governs B's very next request; the admin routes
// refuse a request without the token; GET lists the override; DELETE ends
// it.
func TestDemoOverride(t *testing.T) {
	c := config{quota: 2, window: time.Minute, prefix: redistest.Prefix(t), login: shortLogin, adminToken: "secret"}
	a, _ := serve(t, true, c)
	b, _ := serve(t, true, c) // the same private redis-server, the same prefix

	do := func(method, url string, token bool) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		if token {
			req.Header.Set("Authorization", "Bearer secret")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	for i, want := range []int{200, 200, 429} {
		if res := do("GET", b.URL+"/fixed", false); res.StatusCode != want {
			t.Fatalf("B's call %d: %d, want %d", i, res.StatusCode, want)
		}
	}
	if res := do("PUT", a.URL+"/admin/overrides/fixed/127.0.0.1?quota=5&expiry=10m", false); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("admin route without the token: %d, want 401", res.StatusCode)
	}
	if res := do("PUT", a.URL+"/admin/overrides/fixed/127.0.0.1?quota=5&expiry=10m", true); res.StatusCode != 200 {
		t.Fatalf("override through A: %d", res.StatusCode)
	}
	for i, want := range []int{200, 200, 200, 429} { // 2 of 5 used: exactly 3 more, on B
		res := do("GET", b.URL+"/fixed", false)
		if res.StatusCode != want || res.Header.Get("X-RateLimit-Limit") != "5" || res.Header.Get("RateLimit-Policy") != `"fixed";q=5;w=60` {
			t.Fatalf("B's call %d after the override: %d %v, want %d under quota 5", i, res.StatusCode, res.Header, want)
		}
	}
	res := do("GET", b.URL+"/admin/overrides", true)
	var list []struct {
		Subject, Limit, Expires string
		Quota                   int64
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list) != 1 || list[0].Subject != "127.0.0.1" || list[0].Quota != 5 || list[0].Expires == "" {
		t.Fatalf("listed %+v %v", list, err)
	}
	if res := do("DELETE", a.URL+"/admin/overrides/fixed/127.0.0.1", true); res.StatusCode != http.StatusNoContent {
		t.Fatalf("clear: %d", res.StatusCode)
	}
	if res := do("GET", b.URL+"/fixed", false); res.StatusCode != 429 || res.Header.Get("X-RateLimit-Limit") != "2" {
		t.Fatalf("B after the clear: %d %s, want 429 under quota 2", res.StatusCode, res.Header.Get("X-RateLimit-Limit"))
	}
	if res := do("PUT", a.URL+"/admin/overrides/nope/127.0.0.1?quota=5", true); res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown limit: %d", res.StatusCode)
	}
	if res := do("PUT", a.URL+"/admin/overrides/fixed/127.0.0.1?quota=-1", true); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("negative quota: %d", res.StatusCode)
	}
}
