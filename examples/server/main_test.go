package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/lockout"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// shortLogin is the login lockout with windows short enough to wait out.
var shortLogin = loginLimits{
	account:    lockout.Window{Scope: "temp", Attempts: 2, Window: 700 * time.Millisecond, Block: 700 * time.Millisecond},
	accountDay: lockout.Window{Scope: "long", Attempts: 100, Window: time.Hour, Block: time.Hour},
	password:   lockout.Window{Scope: "password", Attempts: 100, Window: time.Hour, Block: time.Hour},
	ip:         lockout.Window{Scope: "ip", Attempts: 50, Window: time.Hour, Block: time.Hour},
}

// testDeviceKey signs the device cookies of the demos the tests build.
var testDeviceKey = []byte("the demo tests' device key, 32 bytes or more")

// demo serves the demo over the in-process store, or over a private
// redis-server when redis is set, with quota and window.
func demo(t *testing.T, redis bool, quota int64, window time.Duration) *httptest.Server {
	t.Helper()
	srv, _ := demoOn(t, redis, quota, window)
	return srv
}

// demoOn is demo that returns the demo's store too.
func demoOn(t *testing.T, redis bool, quota int64, window time.Duration) (*httptest.Server, *demoStore) {
	t.Helper()
	return serve(t, redis, config{quota: quota, window: window, prefix: redistest.Prefix(t), login: shortLogin})
}

// serve serves the demo with c, over a private redis-server when redis is set.
func serve(t *testing.T, redis bool, c config) (*httptest.Server, *demoStore) {
	t.Helper()
	h, s := handlerOf(t, redis, c)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, s
}

// handlerOf builds the demo's handler with c, over a private redis-server
// when redis is set, without serving it: requests through it may come from
// any RemoteAddr. A c without a device key or -sms-budget gets
// testDeviceKey and 1000.
func handlerOf(t *testing.T, redis bool, c config) (http.Handler, *demoStore) {
	t.Helper()
	if redis {
		c.redisURL = "redis://" + redistest.RealStandalone(t).Addr
	}
	if c.deviceKey == nil {
		c.deviceKey = testDeviceKey
	}
	if c.smsBudget == 0 {
		c.smsBudget = 1000
	}
	s, err := openStore(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	h, err := newHandler(s, c)
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

func status(t *testing.T, res *http.Response, err error) int {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestDemoRecovers runs the demo on both stores with a quota of 3 per second:
// every route denies at its quota and admits again once its window has
// passed, and the login lockout blocks at its allowance and lets the account
// in again once its block and window have passed.
func TestDemoRecovers(t *testing.T) {
	const window = time.Second
	allowed := map[string]int{"/fixed": 3, "/gcra": 3, "/sliding": 3, "/log": 3, "/token": 3, "/leaky": 3, "/multi": 1}
	for _, store := range []string{"in-process", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			srv := demo(t, store == "redis", 3, window)
			get := func(path string) int {
				res, err := http.Get(srv.URL + path)
				return status(t, res, err)
			}
			login := func(user, password string) int {
				res, err := http.PostForm(srv.URL+"/login", url.Values{"username": {user}, "password": {password}})
				return status(t, res, err)
			}
			start := time.Now()
			for path, n := range allowed {
				for i := range n {
					if code := get(path); code != http.StatusOK {
						t.Fatalf("%s request %d: %d, want 200", path, i+1, code)
					}
				}
				if code := get(path); code != http.StatusTooManyRequests {
					t.Fatalf("%s request %d: %d, want 429 at the quota", path, n+1, code)
				}
			}
			for i := range 2 {
				if code := login("bob", "nope"); code != http.StatusUnauthorized {
					t.Fatalf("bob's failure %d: %d", i+1, code)
				}
			}
			if code := login("bob", "builder"); code != http.StatusTooManyRequests {
				t.Fatalf("bob's 3rd attempt: %d, want 429 (2 failures allowed)", code)
			}
			// Denied requests are not recorded, so asking again costs nothing:
			// each route must admit again within its window (plus one bucket
			// for /sliding), and not stay denied as keys that never expire
			// would keep it.
			deadline := start.Add(window + window/10 + 500*time.Millisecond)
			for path := range allowed {
				for get(path) != http.StatusOK {
					if time.Now().After(deadline) {
						t.Fatalf("%s still denied %s after the quota was used up (window %s)", path, time.Since(start), window)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			for login("bob", "builder") != http.StatusOK { // each 429 counts against the IP: poll gently
				if time.Now().After(start.Add(shortLogin.account.Block + 500*time.Millisecond)) {
					t.Fatalf("bob still locked out %s after his block of %s", time.Since(start), shortLogin.account.Block)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

func TestDemoLogin(t *testing.T) {
	srv := demo(t, false, 3, time.Minute)
	post := func(user, password string) int {
		res, err := http.PostForm(srv.URL+"/login", url.Values{"username": {user}, "password": {password}})
		return status(t, res, err)
	}
	for i := range 10 {
		if code := post("alice", "wonderland"); code != 200 {
			t.Fatalf("success %d: %d", i+1, code)
		}
	}
	for i := range 2 {
		if code := post("bob", "nope"); code != 401 {
			t.Fatalf("failure %d: %d", i+1, code)
		}
	}
	if code := post("bob", "builder"); code != 429 { // blocked, password unchecked
		t.Fatalf("bob's 3rd attempt after 2 failures: %d, want 429", code)
	}
	if code := post("alice", "wonderland"); code != 200 {
		t.Fatalf("alice while bob is blocked: %d", code)
	}
}

// TestDemoLoginFlood: one address sending login bodies without a username
// (400) or over 64 KiB (413) is blocked by the per-IP lockout at its
// allowance, and an oversized body is refused without being read.
func TestDemoLoginFlood(t *testing.T) {
	srv := demo(t, false, 3, time.Minute)
	post := func(body string) int {
		res, err := http.Post(srv.URL+"/login", "application/x-www-form-urlencoded", strings.NewReader(body))
		return status(t, res, err)
	}
	if code := post("username=alice&pad=" + strings.Repeat("x", 65<<10)); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 65 KiB body: %d, want 413", code)
	}
	for i := int64(1); i < shortLogin.ip.Attempts; i++ {
		if code := post("password=nope"); code != http.StatusBadRequest {
			t.Fatalf("key-less body %d: %d, want 400", i, code)
		}
	}
	if code := post("password=nope"); code != http.StatusTooManyRequests {
		t.Fatalf("after %d key-less or oversized bodies: %d, want 429 (the IP is blocked)", shortLogin.ip.Attempts, code)
	}
	if code := post("username=alice&password=wonderland"); code != http.StatusTooManyRequests {
		t.Fatalf("the blocked IP's good login: %d, want 429", code)
	}
}

func TestDemoIndex(t *testing.T) {
	srv := demo(t, false, 3, time.Minute)
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var index struct {
		Store  string
		Routes []struct{ Path, Method, Limit string }
		Login  struct {
			PasswordReset string `json:"password_reset"`
			Limits        []string
		}
		Verify struct {
			Send, Check string
			Limits      []string
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&index); err != nil || len(index.Routes) != 10 || index.Routes[0].Path != "/fixed" ||
		index.Routes[0].Limit != "fixed: fixed 3 per 1m0s" || index.Login.PasswordReset == "" || len(index.Login.Limits) != 4 ||
		index.Verify.Send == "" || index.Verify.Check == "" || len(index.Verify.Limits) != 4 {
		t.Fatalf("index: %+v %v", index, err)
	}
}

// TestDemoRedisDown: a -redis URL nobody answers stops the demo at start
// with the cause, instead of serving without limits.
func TestDemoRedisDown(t *testing.T) {
	c := config{quota: 3, window: time.Minute, prefix: "x", login: shortLogin, redisURL: "redis://" + redistest.ClosedAddr(t)}
	if _, err := openStore(context.Background(), c); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("openStore against a closed port: %v, want an error naming the refused connection", err)
	}
}

// TestDemoMetrics: GET /metrics counts each route's decisions by outcome,
// and no client address appears in it.
func TestDemoMetrics(t *testing.T) {
	srv := demo(t, false, 3, time.Minute)
	for range 4 {
		res, err := http.Get(srv.URL + "/fixed")
		status(t, res, err)
	}
	res, err := http.PostForm(srv.URL+"/login", url.Values{"username": {"bob"}, "password": {"nope"}})
	status(t, res, err)
	res, err = http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	text := string(b)
	for _, want := range []string{
		`ratekit_decisions_total{outcome="allowed",policy="fixed"} 3`,
		`ratekit_decisions_total{outcome="denied",policy="fixed"} 1`,
		`ratekit_decisions_total{outcome="allowed",policy="login"} 1`,
		`ratekit_decisions_total{outcome="allowed",policy="login-ip"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(text, "127.0.0.1") || strings.Contains(text, "bob") {
		t.Error("/metrics names a client")
	}
}

// TestDemoDaily: /daily allows the quota per calendar day in -zone, on both
// stores, and a denial waits until the zone's next midnight.
func TestDemoDaily(t *testing.T) {
	ktm, err := time.LoadLocation("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	for _, redis := range []bool{false, true} {
		srv, _ := serve(t, redis, config{quota: 3, window: time.Minute, zone: ktm, prefix: redistest.Prefix(t), login: shortLogin})
		for i := range 4 {
			res, err := http.Get(srv.URL + "/daily")
			code := status(t, res, err)
			if i < 3 {
				if code != http.StatusOK || res.Header.Get("RateLimit-Policy") != `"daily";q=3;w=86400` {
					t.Fatalf("redis %v, request %d: %d %v", redis, i+1, code, res.Header)
				}
				continue
			}
			now := time.Now().In(ktm)
			midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, ktm)
			want := int64(midnight.Sub(now)/time.Second) + 1
			got, _ := strconv.ParseInt(res.Header.Get("Retry-After"), 10, 64)
			if code != http.StatusTooManyRequests || got < want-1 || got > want {
				t.Fatalf("redis %v, past the quota: %d, Retry-After %d; want 429 and about %d s (Kathmandu's midnight)", redis, code, got, want)
			}
		}
	}
}
