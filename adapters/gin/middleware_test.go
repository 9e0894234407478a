package ratekitgin_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	ratekitgin "github.com/ratekit/ratekit/adapters/gin"
)

const peer = "192.0.2.1:1234"

func TestAllowThenDeny(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(2, time.Minute).Named("api"))
	var hits int
	e := engine(ratekitgin.Middleware(l, ratekitgin.ByIP(), clk), &hits)

	for i, want := range []string{"1", "0"} {
		rec := serve(e, "/", peer, nil)
		if rec.Code != 200 || rec.Header().Get("X-RateLimit-Remaining") != want || rec.Body.String() != "ok" {
			t.Fatalf("request %d: %d remaining=%q %q", i+1, rec.Code, rec.Header().Get("X-RateLimit-Remaining"), rec.Body)
		}
	}
	rec := serve(e, "/", peer, nil)
	want := map[string]string{
		"Content-Type": "application/json", "Cache-Control": "no-store", "Retry-After": "60",
		"X-Content-Type-Options": "nosniff", "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0",
		"X-RateLimit-Reset": "1800000060", "RateLimit-Policy": `"api";q=2;w=60`, "RateLimit": `"api";r=0;t=60`,
	}
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("third: %d", rec.Code)
	}
	for k, v := range want {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	body := `{"status":429,"code":"RATE_LIMITED","message":"Too many requests. Try again in 60 seconds.","context":{"retryAfter":60,"limit":2,"remaining":0,"policy":"api"}}`
	if rec.Body.String() != body {
		t.Errorf("body %s", rec.Body)
	}
	if hits != 2 {
		t.Errorf("handler ran %d times, want 2: a denial must abort", hits)
	}
	if other := serve(e, "/", "192.0.2.2:1", nil); other.Code != 200 {
		t.Errorf("another client: %d", other.Code)
	}
}

func TestStoreErrors(t *testing.T) {
	l, err := ratekit.New(brokenStore{}, ratekit.FixedWindow(1, time.Minute).Named("down"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy ratekit.ErrorPolicy
		status int
		hits   int
		body   string
	}{
		{ratekit.FailOpen, 200, 1, "ok"},
		{ratekit.FailClosed, 503, 0, `{"status":503,"code":"SERVICE_UNAVAILABLE","message":"Service temporarily unavailable. Try again in 1 second.","context":{"retryAfter":1}}`},
	} {
		var hits int
		var reported []error
		onErr := func(c *gin.Context, err error) {
			if c == nil || c.Request.URL.Path != "/x" {
				t.Errorf("error handler got context %v", c)
			}
			reported = append(reported, err)
		}
		e := engine(ratekitgin.Middleware(l, ratekitgin.ByIP(),
			ratekitgin.WithErrorPolicy(tc.policy), ratekitgin.WithErrorHandler(onErr)), &hits)
		rec := serve(e, "/x", peer, nil)
		if rec.Code != tc.status || hits != tc.hits || rec.Body.String() != tc.body {
			t.Errorf("policy %d: %d hits=%d %s", tc.policy, rec.Code, hits, rec.Body)
		}
		if len(reported) != 1 || !errors.Is(reported[0], errDown) {
			t.Errorf("policy %d: reported %v", tc.policy, reported)
		}
		if rec.Header().Get("X-RateLimit-Limit") != "" || strings.Contains(rec.Body.String(), "down") {
			t.Errorf("policy %d: leaked %v %s", tc.policy, rec.Header(), rec.Body)
		}
	}
}

func TestSkipAndCost(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(3, time.Minute).Named("api"))
	var hits int
	e := engine(ratekitgin.Middleware(l, ratekitgin.ByIP(), clk,
		ratekitgin.WithSkip(func(c *gin.Context) bool { return c.Request.URL.Path == "/health" }),
		ratekitgin.WithCostFunc(func(c *gin.Context) int64 {
			if c.Request.URL.Path == "/heavy" {
				return 2
			}
			return 1
		})), &hits)

	steps := []struct {
		path, status, remaining string
	}{
		{"/heavy", "200", "1"},
		{"/health", "200", ""}, // skipped: uncounted, no headers
		{"/heavy", "429", "1"}, // 2 > 1 left; denials charge nothing
		{"/", "200", "0"},
		{"/health", "200", ""},
	}
	for i, s := range steps {
		rec := serve(e, s.path, peer, nil)
		if got := rec.Header().Get("X-RateLimit-Remaining"); strconv.Itoa(rec.Code) != s.status || got != s.remaining {
			t.Errorf("step %d %s: %d remaining=%q, want %s %q", i+1, s.path, rec.Code, got, s.status, s.remaining)
		}
	}
}

// WithSkip is honoured: a skipped path is never counted nor refused, even
// when its subject's quota is spent (a net/http option silently ignored by an
// adapter once let health checks get 429s).
func TestWithSkipNeverDenies(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("api"))
	var hits int
	e := engine(ratekitgin.Middleware(l, ratekitgin.ByIP(), clk,
		ratekitgin.WithSkip(func(c *gin.Context) bool { return c.Request.URL.Path == "/healthz" })), &hits)
	for i := range 5 {
		rec := serve(e, "/healthz", peer, nil)
		if rec.Code != 200 || rec.Header().Get("RateLimit") != "" {
			t.Fatalf("healthz %d before the limit: %d %v", i+1, rec.Code, rec.Header())
		}
	}
	if a, b := serve(e, "/", peer, nil).Code, serve(e, "/", peer, nil).Code; a != 200 || b != 429 {
		t.Fatalf("/ after skipped requests: %d then %d, want 200 then 429", a, b)
	}
	for i := range 5 {
		if rec := serve(e, "/healthz", peer, nil); rec.Code != 200 || rec.Body.String() != "ok" {
			t.Errorf("healthz %d after the limit: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	if hits != 11 {
		t.Errorf("handler ran %d times, want 11", hits)
	}
}

func TestKeyFuncs(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	var hits int
	e := engine(ratekitgin.Middleware(l, ratekitgin.Join(ratekitgin.ByIP(), ratekitgin.ByHeader("X-API-Key")),
		ratekitgin.WithErrorHandler(func(*gin.Context, error) {})), &hits)
	for i, tc := range []struct {
		peer, key string
		status    int
	}{
		{peer, "a", 200}, {peer, "a", 429}, {peer, "b", 200}, {"192.0.2.2:1", "a", 200}, {peer, "", 400},
	} {
		h := http.Header{}
		if tc.key != "" {
			h.Set("X-API-Key", tc.key)
		}
		if got := serve(e, "/", tc.peer, h).Code; got != tc.status {
			t.Errorf("request %d (%s, %q): %d, want %d", i+1, tc.peer, tc.key, got, tc.status)
		}
	}

	l2, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	e = engine(ratekitgin.Middleware(l2, ratekitgin.FromHTTP(ratekit.ByHeader("X-User"))), &hits)
	if a, b := serve(e, "/", peer, http.Header{"X-User": {"u"}}).Code, serve(e, "/", "192.0.2.9:1", http.Header{"X-User": {"u"}}).Code; a != 200 || b != 429 {
		t.Errorf("FromHTTP(ratekit.ByHeader): %d then %d", a, b)
	}
}

func TestWithCost(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(3, time.Minute))
	var hits int
	e := engine(ratekitgin.Middleware(l, ratekitgin.ByIP(), ratekitgin.WithCost(3)), &hits)
	if a, b := serve(e, "/", peer, nil).Code, serve(e, "/", peer, nil).Code; a != 200 || b != 429 {
		t.Errorf("cost 3 of 3: %d then %d", a, b)
	}
}

// A default Gin engine trusts every proxy, so c.ClientIP follows
// X-Forwarded-For. The middleware with ratekit.ByIP must not: a client that
// varies the header still shares its bucket.
func TestIgnoresForwardedForByDefault(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	var hits int
	e := engine(ratekitgin.Middleware(l, ratekitgin.ByIP()), &hits)
	first := serve(e, "/", peer, http.Header{"X-Forwarded-For": {"203.0.113.1"}})
	second := serve(e, "/", peer, http.Header{"X-Forwarded-For": {"203.0.113.2"}})
	if first.Code != 200 || second.Code != 429 {
		t.Errorf("spoofed X-Forwarded-For escaped the limit: %d, %d", first.Code, second.Code)
	}
}

func TestByFrameworkIPFollowsEngineTrust(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []string
		second  int
	}{
		{"no trusted proxies", nil, 429},
		{"peer trusted", []string{"192.0.2.0/24"}, 200},
	} {
		l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
		var hits int
		e := engine(ratekitgin.Middleware(l, ratekitgin.ByFrameworkIP()), &hits)
		if err := e.SetTrustedProxies(tc.trusted); err != nil {
			t.Fatal(err)
		}
		serve(e, "/", peer, http.Header{"X-Forwarded-For": {"203.0.113.1"}})
		if got := serve(e, "/", peer, http.Header{"X-Forwarded-For": {"203.0.113.2"}}).Code; got != tc.second {
			t.Errorf("%s: second client %d, want %d", tc.name, got, tc.second)
		}
	}
}

func TestGinKey(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	var hits int
	e := gin.New()
	e.Use(func(c *gin.Context) { c.Set("user", c.GetHeader("X-User")) })
	e.Use(ratekitgin.Middleware(l, func(c *gin.Context) (string, error) { return c.GetString("user"), nil },
		ratekitgin.WithErrorHandler(func(*gin.Context, error) {})))
	e.GET("/", func(c *gin.Context) { hits++ })
	for i, tc := range []struct {
		user   string
		status int
	}{{"ann", 200}, {"bob", 200}, {"ann", 429}, {"", 400}} { // an empty key is a key error: 400 by default
		if got := serve(e, "/", peer, http.Header{"X-User": {tc.user}}).Code; got != tc.status {
			t.Errorf("request %d (user %q): %d, want %d", i+1, tc.user, got, tc.status)
		}
	}
	if hits != 2 {
		t.Errorf("handler ran %d times, want 2", hits)
	}
}

func TestNilPanics(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	for name, f := range map[string]func(){
		"nil key":      func() { ratekitgin.Middleware(l, nil) },
		"nil limiter":  func() { ratekitgin.Middleware(nil, ratekitgin.ByIP()) },
		"nil FromHTTP": func() { ratekitgin.Middleware(l, ratekitgin.FromHTTP(nil)) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "ratekit: ") {
					t.Errorf("%s: recovered %v", name, r)
				}
			}()
			f()
		}()
	}
}
