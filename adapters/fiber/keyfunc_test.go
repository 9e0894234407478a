package ratekitfiber_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	"github.com/ratekit/ratekit/clientip"
)

// keyApp answers every request with the key ByIP(opts...) gives it.
func keyApp(opts ...clientip.Option) *fiber.App {
	key := ratekitfiber.ByIP(opts...)
	app := fiber.New()
	app.Get("/", func(c *fiber.Ctx) error {
		k, err := key(c)
		if err != nil {
			return c.SendString("error: " + err.Error())
		}
		return c.SendString(k)
	})
	return app
}

// ByIP on a Fiber request must give the key ratekit.ByIP gives the same
// request on net/http.
func TestByIPMatchesCore(t *testing.T) {
	lb := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))
	cases := []struct {
		name   string
		opts   []clientip.Option
		peer   string
		header http.Header
		want   string
	}{
		{"peer only by default", nil, "203.0.113.9:1", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.9"},
		{"untrusted peer", []clientip.Option{lb}, "203.0.113.9:1", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.9"},
		{"trusted peer, right to left", []clientip.Option{lb}, "10.0.0.1:1",
			http.Header{"X-Forwarded-For": {"192.0.2.66, 198.51.100.1, 10.2.3.4"}}, "198.51.100.1"},
		{"every line of a repeated header", []clientip.Option{lb}, "10.0.0.1:1",
			http.Header{"X-Forwarded-For": {"192.0.2.66", "198.51.100.1, 10.2.3.4"}}, "198.51.100.1"},
		{"junk stops the walk", []clientip.Option{lb}, "10.0.0.1:1",
			http.Header{"X-Forwarded-For": {"192.0.2.66, junk, 10.2.3.4"}}, "10.2.3.4"},
		{"hops", []clientip.Option{clientip.TrustHops(2)}, "10.0.0.1:1",
			http.Header{"X-Forwarded-For": {"192.0.2.66", "198.51.100.1", "10.2.3.4"}}, "198.51.100.1"},
		{"Forwarded", []clientip.Option{lb, clientip.FromForwarded()}, "10.0.0.1:1",
			http.Header{"Forwarded": {`for=192.0.2.66`, `for="[2001:db8::1]:80";proto=https`}}, "2001:db8::/64"},
		{"single header", []clientip.Option{lb, clientip.FromHeader("CF-Connecting-IP")}, "10.0.0.1:1",
			http.Header{"Cf-Connecting-Ip": {"198.51.100.7"}}, "198.51.100.7"},
		{"IPv6 peer grouped", nil, "[2001:db8:1:2::7]:443", nil, "2001:db8:1:2::/64"},
		{"mapped peer", nil, "[::ffff:192.0.2.5]:1", nil, "192.0.2.5"},
	}
	for _, tc := range cases {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = tc.peer
		req.Header = tc.header.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		core, err := ratekit.ByIP(tc.opts...)(req)
		if err != nil || core != tc.want {
			t.Errorf("%s: ratekit.ByIP = %q, %v; want %q", tc.name, core, err, tc.want)
		}
		if got := do(keyApp(tc.opts...), "/", tc.peer, tc.header).body; got != core {
			t.Errorf("%s: ratekitfiber.ByIP = %q, ratekit.ByIP = %q", tc.name, got, core)
		}
	}
}

// Through app.Test the request crosses the wire format: fasthttp must still
// hand ByIP every line of a repeated header.
func TestByIPReadsEveryHeaderLine(t *testing.T) {
	app := keyApp(clientip.TrustProxies(netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("10.0.0.0/8")))
	req := httptest.NewRequest("GET", "/", nil) // app.Test's peer is 0.0.0.0
	req.Header["X-Forwarded-For"] = []string{"192.0.2.66", "198.51.100.1, 10.2.3.4"}
	res, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b [64]byte
	n, _ := res.Body.Read(b[:])
	if got := string(b[:n]); got != "198.51.100.1" {
		t.Errorf("key %q, want 198.51.100.1", got)
	}
}

func TestJoin(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	var hits int
	app := newApp(ratekitfiber.Middleware(l, ratekitfiber.Join(ratekitfiber.ByIP(), ratekitfiber.ByHeader("X-API-Key")),
		ratekitfiber.WithErrorHandler(func(*fiber.Ctx, error) {})), &hits)
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
		if got := do(app, "/", tc.peer, h).status; got != tc.status {
			t.Errorf("request %d (%s, %q): %d, want %d", i+1, tc.peer, tc.key, got, tc.status)
		}
	}
}

// ByFrameworkIP follows c.IP: the peer by default, the proxy header when the
// app sets one.
func TestByFrameworkIP(t *testing.T) {
	spoof := func(n int) http.Header { return http.Header{"X-Forwarded-For": {"203.0.113." + strconv.Itoa(n)}} }
	for _, tc := range []struct {
		name   string
		cfg    fiber.Config
		second int
	}{
		{"no proxy header", fiber.Config{}, 429},
		{"proxy header", fiber.Config{ProxyHeader: fiber.HeaderXForwardedFor}, 200},
	} {
		l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
		app := fiber.New(tc.cfg)
		app.Use(ratekitfiber.Middleware(l, ratekitfiber.ByFrameworkIP()))
		app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok") })
		if a, b := do(app, "/", peer, spoof(1)).status, do(app, "/", peer, spoof(2)).status; a != 200 || b != tc.second {
			t.Errorf("%s: %d then %d, want 200 then %d", tc.name, a, b, tc.second)
		}
	}
}
