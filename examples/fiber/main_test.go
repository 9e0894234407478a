package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRoutes(t *testing.T) {
	app, err := newApp(2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		code   int
		header http.Header
		body   string
	}
	send := func(method, path string) result {
		res, err := app.Test(httptest.NewRequest(method, path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return result{res.StatusCode, res.Header, string(b)}
	}
	for i, want := range []struct {
		code int
		body string
	}{
		{200, `{"hello":"world","remaining":"1"}`},
		{200, `{"hello":"world","remaining":"0"}`},
		{429, `{"status":429,"code":"RATE_LIMITED",`},
	} {
		if r := send("GET", "/api/hello"); r.code != want.code || !strings.HasPrefix(r.body, want.body) {
			t.Fatalf("/api/hello %d: %d %s, want %d %s", i+1, r.code, r.body, want.code, want.body)
		}
	}
	for i := range 3 {
		if r := send("GET", "/healthz"); r.code != 200 || r.header.Get("RateLimit") != "" {
			t.Fatalf("/healthz %d: %d %v", i+1, r.code, r.header)
		}
	}
	for i := range 5 {
		if r := send("POST", "/login"); r.code != http.StatusUnauthorized {
			t.Fatalf("login attempt %d: %d", i+1, r.code)
		}
	}
	r := send("POST", "/login")
	if r.code != 429 || r.header.Get("Retry-After") != "900" {
		t.Fatalf("sixth login attempt: %d %v", r.code, r.header)
	}
	if !strings.HasPrefix(r.body, `{"status":429,"code":"TOO_MANY_ATTEMPTS",`) {
		t.Errorf("body %s", r.body)
	}
}
