package ratekitfiber_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	"github.com/ratekit/ratekit/clientip"
)

const peer = "192.0.2.1:1234"

func TestAllowThenDeny(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(2, time.Minute).Named("api"))
	var hits int
	app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByIP(), clk), &hits)

	for i, want := range []string{"1", "0"} {
		r := do(app, "/", peer, nil)
		if r.status != 200 || r.header.Get("X-RateLimit-Remaining") != want || r.body != "ok" {
			t.Fatalf("request %d: %d remaining=%q %q", i+1, r.status, r.header.Get("X-RateLimit-Remaining"), r.body)
		}
	}
	r := do(app, "/", peer, nil)
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("third: %d", r.status)
	}
	for k, v := range map[string]string{
		"Content-Type": "application/json", "Cache-Control": "no-store", "Retry-After": "60",
		"X-Content-Type-Options": "nosniff", "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0",
		"X-RateLimit-Reset": "1800000060", "RateLimit-Policy": `"api";q=2;w=60`, "RateLimit": `"api";r=0;t=60`,
	} {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	body := `{"status":429,"code":"RATE_LIMITED","message":"Too many requests. Try again in 60 seconds.","context":{"retryAfter":60,"limit":2,"remaining":0,"policy":"api"}}`
	if r.body != body {
		t.Errorf("body %s", r.body)
	}
	if hits != 2 {
		t.Errorf("handler ran %d times, want 2: a denial must stop the chain", hits)
	}
	if other := do(app, "/", "192.0.2.2:1", nil); other.status != 200 {
		t.Errorf("another client: %d", other.status)
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
		app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByIP(),
			ratekitfiber.WithErrorPolicy(tc.policy),
			ratekitfiber.WithErrorHandler(func(c *fiber.Ctx, err error) {
				if c.Path() != "/x" {
					t.Errorf("error handler got path %q", c.Path())
				}
				reported = append(reported, err)
			})), &hits)
		r := do(app, "/x", peer, nil)
		if r.status != tc.status || hits != tc.hits || r.body != tc.body {
			t.Errorf("policy %d: %d hits=%d %s", tc.policy, r.status, hits, r.body)
		}
		if len(reported) != 1 || !errors.Is(reported[0], errDown) {
			t.Errorf("policy %d: reported %v", tc.policy, reported)
		}
		if r.header.Get("X-RateLimit-Limit") != "" || (tc.status == 503 && r.header.Get("Retry-After") != "1") {
			t.Errorf("policy %d: headers %v", tc.policy, r.header)
		}
	}
}

// Without WithErrorHandler the core's handler reports the error: a slog
// warning (with no request, so no path), at most once per second.
func TestDefaultErrorHandler(t *testing.T) {
	var buf bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	l, err := ratekit.New(brokenStore{}, ratekit.FixedWindow(1, time.Minute).Named("down"))
	if err != nil {
		t.Fatal(err)
	}
	var hits int
	app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByIP()), &hits)
	for range 2 {
		if r := do(app, "/", peer, nil); r.status != 200 {
			t.Errorf("fail open: %d", r.status)
		}
	}
	if log := buf.String(); strings.Count(log, "level=WARN") != 1 || !strings.Contains(log, errDown.Error()) || !strings.Contains(log, `path=""`) {
		t.Errorf("log %q", log)
	}
}

func TestSkipAndCost(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(3, time.Minute).Named("api"))
	var hits int
	app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByIP(), clk,
		ratekitfiber.WithSkip(func(c *fiber.Ctx) bool { return c.Path() == "/health" }),
		ratekitfiber.WithCostFunc(func(c *fiber.Ctx) int64 {
			if c.Path() == "/heavy" {
				return 2
			}
			return 1
		})), &hits)
	for i, s := range []struct {
		path, status, remaining string
	}{
		{"/heavy", "200", "1"},
		{"/health", "200", ""}, // skipped: uncounted, no headers
		{"/heavy", "429", "1"}, // 2 > 1 left; denials charge nothing
		{"/", "200", "0"},
		{"/health", "200", ""},
	} {
		r := do(app, s.path, peer, nil)
		if got := r.header.Get("X-RateLimit-Remaining"); strconv.Itoa(r.status) != s.status || got != s.remaining {
			t.Errorf("step %d %s: %d remaining=%q, want %s %q", i+1, s.path, r.status, got, s.status, s.remaining)
		}
	}
}

// WithSkip is honoured: a skipped path is never counted nor refused, even
// when its subject's quota is spent (a net/http option silently ignored by an
// adapter once let health checks get 429s).
func TestWithSkipNeverDenies(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("api"))
	var hits int
	app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByIP(), clk,
		ratekitfiber.WithSkip(func(c *fiber.Ctx) bool { return c.Path() == "/healthz" })), &hits)
	for i := range 5 {
		r := do(app, "/healthz", peer, nil)
		if r.status != 200 || r.header.Get("RateLimit") != "" {
			t.Fatalf("healthz %d before the limit: %d %v", i+1, r.status, r.header)
		}
	}
	if a, b := do(app, "/", peer, nil).status, do(app, "/", peer, nil).status; a != 200 || b != 429 {
		t.Fatalf("/ after skipped requests: %d then %d, want 200 then 429", a, b)
	}
	for i := range 5 {
		if r := do(app, "/healthz", peer, nil); r.status != 200 || r.body != "ok" {
			t.Errorf("healthz %d after the limit: %d %s", i+1, r.status, r.body)
		}
	}
	if hits != 11 {
		t.Errorf("handler ran %d times, want 11", hits)
	}
}

func TestWithCost(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(3, time.Minute))
	var hits int
	app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByIP(), ratekitfiber.WithCost(3)), &hits)
	if a, b := do(app, "/", peer, nil).status, do(app, "/", peer, nil).status; a != 200 || b != 429 {
		t.Errorf("cost 3 of 3: %d then %d", a, b)
	}
}

// A key that aliases Fiber's request buffers (c.Get) must not be kept by the
// store as is: the next request on the same connection rewrites the buffer,
// and the stored subject with it.
func TestKeyFromReusedBuffer(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	var hits int
	app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByHeader("X-Key")), &hits)
	conn := new(fasthttp.RequestCtx)
	// Two headers give the connection two header buffers, B0 and B1.
	do := func(header http.Header) int { return doOn(conn, app, "/", peer, header).status }
	if got := do(http.Header{"A-Pad": {"-"}, "X-Key": {"zzzz"}}); got != 200 {
		t.Fatalf("priming request: %d", got)
	}
	// Subject aaaa arrives in B0 ...
	if got := do(http.Header{"X-Key": {"aaaa"}}); got != 200 {
		t.Fatalf("first request of aaaa: %d", got)
	}
	// ... and then in B1, while B0 holds "qqqq".
	if got := do(http.Header{"A-Pad": {"qqqq"}, "X-Key": {"aaaa"}}); got != 429 {
		t.Errorf("second request of aaaa: %d, want 429", got)
	}
}

// A missing key header follows the core's key-error policy: 400 by default,
// through when it is FailOpen.
func TestByHeaderMissing(t *testing.T) {
	for _, tc := range []struct {
		opts   []ratekitfiber.Option
		status int
	}{
		{nil, 400},
		{[]ratekitfiber.Option{ratekitfiber.WithKeyErrorPolicy(ratekit.FailOpen)}, 200},
	} {
		l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
		var hits int
		var got error
		opts := append(tc.opts, ratekitfiber.WithErrorHandler(func(_ *fiber.Ctx, err error) { got = err }))
		app := newApp(ratekitfiber.Middleware(l, ratekitfiber.ByHeader("X-Key"), opts...), &hits)
		if r := do(app, "/", peer, nil); r.status != tc.status || !errors.Is(got, ratekit.ErrEmptyKey) {
			t.Errorf("%d %v %s", r.status, got, r.body)
		}
		if r := do(app, "/", peer, http.Header{"X-Key": {"k"}}); r.status != 200 || r.header.Get("RateLimit") == "" {
			t.Errorf("with the header: %d %v", r.status, r.header)
		}
	}
}

func TestNilPanics(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	for name, f := range map[string]func(){
		"nil key":     func() { ratekitfiber.Middleware(l, nil) },
		"nil limiter": func() { ratekitfiber.Middleware(nil, ratekitfiber.ByIP()) },
		"bad option":  func() { ratekitfiber.ByIP(clientip.TrustHops(0)) },
	} {
		func() {
			defer func() {
				r := recover()
				s, _ := r.(string)
				if err, ok := r.(error); ok {
					s = err.Error()
				}
				if !strings.HasPrefix(s, "ratekit: ") {
					t.Errorf("%s: recovered %v", name, r)
				}
			}()
			f()
		}()
	}
}
