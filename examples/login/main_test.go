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
	for i := range 3 {
		if rec := post("alice", "000000"); rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("wrong code %d: %d", i+1, rec.Code)
		}
	}
	if rec := post("alice", "424242"); rec.Code != 200 { // the right code clears the 3 failures
		t.Fatalf("right code: %d", rec.Code)
	}
	for range 4 {
		post("alice", "111111")
	}
	rec := post("alice", "424242")
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "600" {
		t.Fatalf("after 4 wrong codes: %d Retry-After %q, want 429, 600", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := post("", "424242"); rec.Code != 400 {
		t.Fatalf("no account: %d", rec.Code)
	}
}
