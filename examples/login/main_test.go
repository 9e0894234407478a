package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/ratekit/ratekit/store/memstore"
)

func TestVerify(t *testing.T) {
	h, err := newHandler(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	post := func(account, code string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/verify", nil)
		r.PostForm = url.Values{"account": {account}, "code": {code}}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	for i := range 2 {
		if rec := post("alice", "000000"); rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("wrong code %d: %d", i+1, rec.Code)
		}
	}
	if rec := post("alice", "424242"); rec.Code != 200 { // the 3rd attempt, right: clears the account
		t.Fatalf("right code: %d", rec.Code)
	}
	for i := range 3 {
		if rec := post("alice", "111111"); rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("wrong code %d after the reset: %d", i+1, rec.Code)
		}
	}
	rec := post("alice", "424242") // the 4th attempt in 10 minutes: blocked, code unchecked
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "600" {
		t.Fatalf("4th attempt: %d Retry-After %q, want 429, 600", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := post("", "424242"); rec.Code != 400 {
		t.Fatalf("no account: %d", rec.Code)
	}
}
