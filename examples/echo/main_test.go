package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRoutes(t *testing.T) {
	h, err := newRouter(2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}
	for i, want := range []struct {
		code int
		body string
	}{
		{200, `{"hello":"world","remaining":"1"}`},
		{200, `{"hello":"world","remaining":"0"}`},
		{429, `{"status":429,"code":"RATE_LIMITED",`},
	} {
		if rec := send("GET", "/api/hello"); rec.Code != want.code || !strings.HasPrefix(rec.Body.String(), want.body) {
			t.Fatalf("/api/hello %d: %d %s, want %d %s", i+1, rec.Code, rec.Body, want.code, want.body)
		}
	}
	for i := range 3 {
		if rec := send("GET", "/healthz"); rec.Code != 200 || rec.Header().Get("RateLimit") != "" {
			t.Fatalf("/healthz %d: %d %v", i+1, rec.Code, rec.Header())
		}
	}
	for i := range 5 {
		if rec := send("POST", "/login"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("login attempt %d: %d", i+1, rec.Code)
		}
	}
	rec := send("POST", "/login")
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "900" {
		t.Fatalf("sixth login attempt: %d %v", rec.Code, rec.Header())
	}
	if body := rec.Body.String(); !strings.HasPrefix(body, `{"status":429,"code":"TOO_MANY_ATTEMPTS",`) {
		t.Errorf("body %s", body)
	}
}
