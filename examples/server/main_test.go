package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

func TestDemoLogin(t *testing.T) {
	srv := demo(t)
	post := func(user, password string) int {
		res, err := http.PostForm(srv.URL+"/login", url.Values{"username": {user}, "password": {password}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for i := range 10 {
		if code := post("alice", "wonderland"); code != 200 {
			t.Fatalf("success %d: %d", i+1, code)
		}
	}
	for i := range 5 {
		if code := post("bob", "nope"); code != 401 {
			t.Fatalf("failure %d: %d", i+1, code)
		}
	}
	if code := post("bob", "builder"); code != 429 { // the 6th attempt is blocked, password unchecked
		t.Fatalf("bob's 6th attempt after 5 failures: %d, want 429", code)
	}
	if code := post("alice", "wonderland"); code != 200 {
		t.Fatalf("alice while bob is blocked: %d", code)
	}
}

func TestDemoRoutes(t *testing.T) {
	srv := demo(t)

	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Routes []struct{ Path, Method, Limit string }
	}
	if err := json.NewDecoder(res.Body).Decode(&index); err != nil || len(index.Routes) != 7 || index.Routes[0].Path != "/fixed" {
		t.Fatalf("index: %+v %v", index, err)
	}
	res.Body.Close()
	allowed := map[string]int{"/fixed": 3, "/gcra": 3, "/sliding": 3, "/log": 3, "/token": 3, "/leaky": 3, "/multi": 1}
	for path, n := range allowed {
		for i := range n + 1 {
			res, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			want := http.StatusOK
			if i == n {
				want = http.StatusTooManyRequests
			}
			if res.StatusCode != want || res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s request %d: %d %s", path, i+1, res.StatusCode, res.Header.Get("Content-Type"))
			}
		}
	}
}

// demo serves the demo over its embedded Redis, at quota 3 per minute.
func demo(t *testing.T) *httptest.Server {
	client, where, closeFn, err := connect("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	h, err := newHandler(client, config{quota: 3, window: time.Minute, prefix: "demo-test"}, where)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
