package ratekitecho_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
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
func limiter(t *testing.T, limits ...ratekit.Limit) (*ratekit.Limiter, ratekitecho.Option) {
	t.Helper()
	clk := &clock{now: start}
	l, err := ratekit.New(memstore.New(memstore.WithClock(clk.Now)), limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l, ratekitecho.WithHeaderClock(clk.Now)
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

// serve sends one request from peer to h.
func serve(h http.Handler, path, peer string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.RemoteAddr = peer
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// newEcho returns an Echo instance with mw on every GET path, whose handler
// counts its calls in *hits.
func newEcho(mw echo.MiddlewareFunc, hits *int) *echo.Echo {
	e := echo.New()
	e.Use(mw)
	e.GET("/*", func(c echo.Context) error {
		*hits++
		return c.String(http.StatusOK, "ok")
	})
	return e
}
