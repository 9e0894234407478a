package ratekitecho_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
	"github.com/ratekit/ratekit/response"
)

const (
	peer       = "192.0.2.1:1234"
	deniedBody = `{"status":429,"code":"RATE_LIMITED","message":"Too many requests. Try again in 60 seconds.","context":{"retryAfter":60,"limit":2,"remaining":0,"policy":"api"}}`
	closedBody = `{"status":503,"code":"SERVICE_UNAVAILABLE","message":"Service temporarily unavailable. Try again in 1 second.","context":{"retryAfter":1}}`
)

var deniedHeaders = map[string]string{
	"Content-Type": "application/json", "Cache-Control": "no-store", "Retry-After": "60",
	"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0",
	"X-RateLimit-Reset": "1800000060", "RateLimit-Policy": `"api";q=2;w=60`, "RateLimit": `"api";r=0;t=60`,
}

func wantHeaders(t *testing.T, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}

func TestAllowThenDeny(t *testing.T) {
	// ReturnError must give the same status and headers; the body differs
	// only by the newline of Echo's JSON encoder.
	for _, returnError := range []bool{false, true} {
		l, clk := limiter(t, ratekit.FixedWindow(2, time.Minute).Named("api"))
		var hits int
		opts := []ratekitecho.Option{clk}
		if returnError {
			opts = append(opts, ratekitecho.WithReturnError())
		}
		e := newEcho(ratekitecho.Middleware(l, ratekitecho.ByIP(), opts...), &hits)
		for i, want := range []string{"1", "0"} {
			rec := serve(e, "/", peer, nil)
			if rec.Code != 200 || rec.Header().Get("X-RateLimit-Remaining") != want || rec.Body.String() != "ok" {
				t.Fatalf("request %d: %d remaining=%q %q", i+1, rec.Code, rec.Header().Get("X-RateLimit-Remaining"), rec.Body)
			}
		}
		rec := serve(e, "/", peer, nil)
		if rec.Code != http.StatusTooManyRequests {
			t.Fatalf("ReturnError=%v: third: %d", returnError, rec.Code)
		}
		wantHeaders(t, rec.Header(), deniedHeaders)
		body, nosniff := deniedBody, "nosniff"
		if returnError { // Echo's DefaultHTTPErrorHandler wrote the body
			body, nosniff = body+"\n", ""
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != nosniff {
			t.Errorf("ReturnError=%v: X-Content-Type-Options %q", returnError, got)
		}
		if rec.Body.String() != body {
			t.Errorf("ReturnError=%v: body %q", returnError, rec.Body)
		}
		if hits != 2 {
			t.Errorf("handler ran %d times, want 2", hits)
		}
	}
}

func TestStoreErrors(t *testing.T) {
	l, err := ratekit.New(brokenStore{}, ratekit.FixedWindow(1, time.Minute).Named("down"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy      ratekit.ErrorPolicy
		returnError bool
		status      int
		hits        int
		body        string
	}{
		{ratekit.FailOpen, false, 200, 1, "ok"},
		{ratekit.FailOpen, true, 200, 1, "ok"},
		{ratekit.FailClosed, false, 503, 0, closedBody},
		{ratekit.FailClosed, true, 503, 0, closedBody + "\n"},
	} {
		var hits int
		var reported []error
		onErr := func(c echo.Context, err error) {
			if c == nil || c.Request().URL.Path != "/x" {
				t.Errorf("error handler got context %v", c)
			}
			reported = append(reported, err)
		}
		opts := []ratekitecho.Option{ratekitecho.WithErrorPolicy(tc.policy), ratekitecho.WithErrorHandler(onErr)}
		if tc.returnError {
			opts = append(opts, ratekitecho.WithReturnError())
		}
		e := newEcho(ratekitecho.Middleware(l, ratekitecho.ByIP(), opts...), &hits)
		rec := serve(e, "/x", peer, nil)
		name := "policy " + strconv.Itoa(int(tc.policy)) + " ReturnError=" + strconv.FormatBool(tc.returnError)
		if rec.Code != tc.status || hits != tc.hits || rec.Body.String() != tc.body {
			t.Errorf("%s: %d hits=%d %q", name, rec.Code, hits, rec.Body)
		}
		if len(reported) != 1 || !errors.Is(reported[0], errDown) {
			t.Errorf("%s: reported %v", name, reported)
		}
		if tc.status == 503 {
			wantHeaders(t, rec.Header(), map[string]string{"Retry-After": "1", "Cache-Control": "no-store", "Content-Type": "application/json"})
		}
	}
}

// In ReturnError mode a custom HTTPErrorHandler receives an *echo.HTTPError
// carrying the *response.Error and, on a 503, the store error.
func TestReturnErrorForCustomHandler(t *testing.T) {
	ok, _ := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("api"))
	down, err := ratekit.New(brokenStore{}, ratekit.FixedWindow(1, time.Minute).Named("down"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		l       *ratekit.Limiter
		status  int
		code    response.Code
		isStore bool
	}{
		{ok, 429, response.CodeRateLimited, false},
		{down, 503, response.CodeServiceUnavailable, true},
	} {
		var got error
		var hits int
		e := newEcho(ratekitecho.Middleware(tc.l, ratekitecho.ByIP(), ratekitecho.WithReturnError(),
			ratekitecho.WithErrorPolicy(ratekit.FailClosed), ratekitecho.WithErrorHandler(func(echo.Context, error) {})), &hits)
		e.HTTPErrorHandler = func(err error, c echo.Context) {
			got = err
			_ = c.String(418, "house format")
		}
		serve(e, "/", peer, nil)
		rec := serve(e, "/", peer, nil)
		var he *echo.HTTPError
		var resp *response.Error
		if rec.Code != 418 || !errors.As(got, &he) || he.Code != tc.status || !errors.As(got, &resp) || resp.Code != tc.code {
			t.Fatalf("%d: got %d %v", tc.status, rec.Code, got)
		}
		if errors.Is(got, errDown) != tc.isStore || strings.Contains(he.Error(), "[123") {
			t.Errorf("%d: error %q", tc.status, he.Error())
		}
		if ct := rec.Header().Get("Content-Type"); ct != echo.MIMETextPlainCharsetUTF8 || rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%d: the handler's text came with %q, %v", tc.status, ct, rec.Header())
		}
	}
}

func TestSkipAndCost(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(3, time.Minute).Named("api"))
	var hits int
	e := newEcho(ratekitecho.Middleware(l, ratekitecho.ByIP(), clk,
		ratekitecho.WithSkip(func(c echo.Context) bool { return c.Path() == "/health" }),
		ratekitecho.WithCostFunc(func(c echo.Context) int64 {
			if c.Request().URL.Path == "/heavy" {
				return 2
			}
			return 1
		})), &hits)
	e.GET("/health", func(c echo.Context) error { return c.String(200, "healthy") })

	for i, s := range []struct {
		path, status, remaining string
	}{
		{"/heavy", "200", "1"},
		{"/health", "200", ""}, // skipped: uncounted, no headers
		{"/heavy", "429", "1"}, // 2 > 1 left; denials charge nothing
		{"/", "200", "0"},
		{"/health", "200", ""},
	} {
		rec := serve(e, s.path, peer, nil)
		if got := rec.Header().Get("X-RateLimit-Remaining"); strconv.Itoa(rec.Code) != s.status || got != s.remaining {
			t.Errorf("step %d %s: %d remaining=%q, want %s %q", i+1, s.path, rec.Code, got, s.status, s.remaining)
		}
	}
}

// Without an IPExtractor, Echo's RealIP is the leftmost X-Forwarded-For
// value. Middleware with ByIP must not follow it; ByFrameworkIP does,
// which is why it is opt-in.
func TestForwardedForIsNotTrustedByDefault(t *testing.T) {
	spoof := func(n int) http.Header { return http.Header{"X-Forwarded-For": {"203.0.113." + strconv.Itoa(n)}} }
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	var hits int
	e := newEcho(ratekitecho.Middleware(l, ratekitecho.ByIP()), &hits)
	if a, b := serve(e, "/", peer, spoof(1)).Code, serve(e, "/", peer, spoof(2)).Code; a != 200 || b != 429 {
		t.Errorf("ByIP: spoofed X-Forwarded-For escaped the limit: %d, %d", a, b)
	}

	l, _ = limiter(t, ratekit.FixedWindow(1, time.Minute))
	e = newEcho(ratekitecho.Middleware(l, ratekitecho.ByFrameworkIP()), &hits)
	if a, b := serve(e, "/", peer, spoof(1)).Code, serve(e, "/", peer, spoof(2)).Code; a != 200 || b != 200 {
		t.Errorf("ByFrameworkIP without IPExtractor: %d, %d; want it to follow the header", a, b)
	}
	e.IPExtractor = echo.ExtractIPDirect()
	if a := serve(e, "/", peer, spoof(3)).Code; a != 200 {
		t.Errorf("ByFrameworkIP with ExtractIPDirect, first request of the peer: %d", a)
	}
	if b := serve(e, "/", peer, spoof(4)).Code; b != 429 {
		t.Errorf("ByFrameworkIP with ExtractIPDirect: %d, want the peer's own bucket", b)
	}
}

// WithSkip is honoured: a skipped path is never counted nor refused, even
// when its subject's quota is spent (a net/http option silently ignored by an
// adapter once let health checks get 429s).
func TestWithSkipNeverDenies(t *testing.T) {
	for _, returnError := range []bool{false, true} {
		l, clk := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("api"))
		var hits int
		opts := []ratekitecho.Option{clk, ratekitecho.WithSkip(func(c echo.Context) bool { return c.Request().URL.Path == "/healthz" })}
		if returnError {
			opts = append(opts, ratekitecho.WithReturnError())
		}
		e := newEcho(ratekitecho.Middleware(l, ratekitecho.ByIP(), opts...), &hits)
		for i := range 5 {
			rec := serve(e, "/healthz", peer, nil)
			if rec.Code != 200 || rec.Header().Get("RateLimit") != "" {
				t.Fatalf("ReturnError=%v: healthz %d before the limit: %d %v", returnError, i+1, rec.Code, rec.Header())
			}
		}
		if a, b := serve(e, "/", peer, nil).Code, serve(e, "/", peer, nil).Code; a != 200 || b != 429 {
			t.Fatalf("ReturnError=%v: / after skipped requests: %d then %d, want 200 then 429", returnError, a, b)
		}
		for i := range 5 {
			if rec := serve(e, "/healthz", peer, nil); rec.Code != 200 || rec.Body.String() != "ok" {
				t.Errorf("ReturnError=%v: healthz %d after the limit: %d %s", returnError, i+1, rec.Code, rec.Body)
			}
		}
		if hits != 11 {
			t.Errorf("ReturnError=%v: handler ran %d times, want 11", returnError, hits)
		}
	}
}

func TestKeyFuncs(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	var hits int
	e := newEcho(ratekitecho.Middleware(l, ratekitecho.Join(ratekitecho.ByIP(), ratekitecho.ByHeader("X-API-Key")),
		ratekitecho.WithErrorHandler(func(echo.Context, error) {})), &hits)
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
	e = newEcho(ratekitecho.Middleware(l2, ratekitecho.FromHTTP(ratekit.ByHeader("X-User"))), &hits)
	if a, b := serve(e, "/", peer, http.Header{"X-User": {"u"}}).Code, serve(e, "/", "192.0.2.9:1", http.Header{"X-User": {"u"}}).Code; a != 200 || b != 429 {
		t.Errorf("FromHTTP(ratekit.ByHeader): %d then %d", a, b)
	}
}

func TestNilPanics(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	for name, f := range map[string]func(){
		"nil key":      func() { ratekitecho.Middleware(l, nil) },
		"nil limiter":  func() { ratekitecho.Middleware(nil, ratekitecho.ByIP()) },
		"nil FromHTTP": func() { ratekitecho.Middleware(l, ratekitecho.FromHTTP(nil)) },
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.HasPrefix(r, "ratekit: ") {
					t.Errorf("%s: recovered %q", name, r)
				}
			}()
			f()
		}()
	}
}
