package ratekitfiber_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	"github.com/ratekit/ratekit/store/memstore"
)

// start is the fake clock's origin: X-RateLimit-Reset values are exact.
var start = time.Unix(1_800_000_000, 0)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// limiter returns a Limiter over a memstore on a fake clock, and the option
// that makes the header clock the same clock.
func limiter(t testing.TB, limits ...ratekit.Limit) (*ratekit.Limiter, ratekitfiber.Option) {
	t.Helper()
	clk := &clock{now: start}
	l, err := ratekit.New(memstore.New(memstore.WithClock(clk.Now)), limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l, ratekitfiber.WithHeaderClock(clk.Now)
}

// brokenStore fails every call, as a Redis that is down would.
type brokenStore struct{}

var errDown = errors.New("ratekit: test store is down")

func (s brokenStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (brokenStore) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (brokenStore) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (brokenStore) Reset(context.Context, string, []ratekit.Limit) error { return errDown }

// response is what a test reads of a Fiber response.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends one GET request from peer ("ip:port") through app's fasthttp
// handler, the way a fasthttp server would after parsing it.
func do(app *fiber.App, path, peer string, header http.Header) response {
	return doOn(new(fasthttp.RequestCtx), app, path, peer, header)
}

// doOn is do on a given RequestCtx, which a server would reuse from request
// to request along with its buffers. Headers are added in sorted order, as
// they go on the wire from net/http.
func doOn(ctx *fasthttp.RequestCtx, app *fiber.App, path, peer string, header http.Header) response {
	var req fasthttp.Request
	req.Header.SetMethod(http.MethodGet)
	req.SetRequestURI(path)
	for _, k := range slices.Sorted(maps.Keys(header)) {
		for _, v := range header[k] {
			req.Header.Add(k, v)
		}
	}
	ctx.Response.Reset()
	ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(peer)), nil)
	app.Handler()(ctx)
	r := response{status: ctx.Response.StatusCode(), header: http.Header{}, body: string(ctx.Response.Body())}
	ctx.Response.Header.VisitAll(func(k, v []byte) { r.header.Add(string(k), string(v)) })
	return r
}

// newApp returns a Fiber app with mw in front of every GET path, whose
// handler counts its calls in *hits.
func newApp(mw fiber.Handler, hits *int) *fiber.App {
	app := fiber.New()
	app.Use(mw)
	app.Get("/*", func(c *fiber.Ctx) error {
		*hits++
		return c.SendString("ok")
	})
	return app
}
