package paritytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	ratekitgin "github.com/ratekit/ratekit/adapters/gin"
)

// result is one response as the client sees it.
type result struct {
	status int
	header http.Header
	body   string
}

// A client sends one request to a framework's app.
type client func(t *testing.T, req *http.Request) result

// targets build the same app on each framework from a fixture.
var targets = []struct {
	name  string
	build func(f *fixture) client
}{
	{"net/http", netHTTPApp},
	{"gin", ginApp},
	{"echo", echoApp},
	{"fiber", fiberApp},
}

func netHTTPApp(f *fixture) client {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", textPlain)
		_, _ = w.Write(okBody(r.URL.Path))
	})
	key := ratekit.ByIP(trust...)
	api := append(f.apiOpts(),
		ratekit.WithSkip(func(r *http.Request) bool { return skip(r.URL.Path) }),
		ratekit.WithCostFunc(func(r *http.Request) int64 { return cost(r.URL.Path) }))
	mux := http.NewServeMux()
	mux.Handle("/api/", ratekit.Middleware(f.api, key, api...)(h))
	mux.Handle("/open/", ratekit.Middleware(f.broken, key, f.openOpts()...)(h))
	mux.Handle("/closed/", ratekit.Middleware(f.broken, key, f.closedOpts()...)(h))
	mux.Handle("/keyed/", ratekit.Middleware(f.keyed, ratekit.ByHeader("X-Api-Key"), f.apiOpts()...)(h))
	mux.Handle("/login/", ratekit.Middleware(f.login, key, f.loginOpts()...)(h))
	return recorder(mux)
}

func ginApp(f *fixture) client {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	h := func(c *gin.Context) { c.Data(http.StatusOK, textPlain, okBody(c.Request.URL.Path)) }
	key := ratekit.ByIP(trust...)
	e.Group("/api", ratekitgin.Middleware(f.api, key, ratekitgin.WithCore(f.apiOpts()...),
		ratekitgin.WithSkip(func(c *gin.Context) bool { return skip(c.Request.URL.Path) }),
		ratekitgin.WithCostFunc(func(c *gin.Context) int64 { return cost(c.Request.URL.Path) }),
	)).GET("/*p", h)
	e.Group("/open", ratekitgin.Middleware(f.broken, key, ratekitgin.WithCore(f.openOpts()...))).GET("/*p", h)
	e.Group("/closed", ratekitgin.Middleware(f.broken, key, ratekitgin.WithCore(f.closedOpts()...))).GET("/*p", h)
	e.Group("/keyed", ratekitgin.Middleware(f.keyed, ratekit.ByHeader("X-Api-Key"), ratekitgin.WithCore(f.apiOpts()...))).GET("/*p", h)
	e.Group("/login", ratekitgin.Middleware(f.login, key, ratekitgin.WithCore(f.loginOpts()...))).GET("/*p", h)
	return recorder(e)
}

func echoApp(f *fixture) client {
	e := echo.New()
	h := func(c echo.Context) error { return c.Blob(http.StatusOK, textPlain, okBody(c.Request().URL.Path)) }
	key := ratekitecho.HTTPKey(ratekit.ByIP(trust...))
	e.Group("/api", ratekitecho.MiddlewareWithConfig(ratekitecho.Config{
		Skipper:  func(c echo.Context) bool { return skip(c.Request().URL.Path) },
		Limiter:  f.api,
		KeyFunc:  key,
		CostFunc: func(c echo.Context) int64 { return cost(c.Request().URL.Path) },
		Options:  f.apiOpts(),
	})).GET("/*", h)
	e.Group("/open", ratekitecho.MiddlewareWithConfig(ratekitecho.Config{Limiter: f.broken, KeyFunc: key, Options: f.openOpts()})).GET("/*", h)
	e.Group("/closed", ratekitecho.MiddlewareWithConfig(ratekitecho.Config{Limiter: f.broken, KeyFunc: key, Options: f.closedOpts()})).GET("/*", h)
	e.Group("/keyed", ratekitecho.Middleware(f.keyed, ratekit.ByHeader("X-Api-Key"), f.apiOpts()...)).GET("/*", h)
	e.Group("/login", ratekitecho.Middleware(f.login, ratekit.ByIP(trust...), f.loginOpts()...)).GET("/*", h)
	return recorder(e)
}

func fiberApp(f *fixture) client {
	app := fiber.New()
	h := func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, textPlain)
		return c.Send(okBody(c.Path()))
	}
	key := ratekitfiber.ByIP(trust...)
	app.Group("/api", ratekitfiber.Middleware(f.api, key, ratekitfiber.WithCore(f.apiOpts()...),
		ratekitfiber.WithSkip(func(c *fiber.Ctx) bool { return skip(c.Path()) }),
		ratekitfiber.WithCostFunc(func(c *fiber.Ctx) int64 { return cost(c.Path()) }),
	)).Get("/*", h)
	app.Group("/open", ratekitfiber.Middleware(f.broken, key, ratekitfiber.WithCore(f.openOpts()...))).Get("/*", h)
	app.Group("/closed", ratekitfiber.Middleware(f.broken, key, ratekitfiber.WithCore(f.closedOpts()...))).Get("/*", h)
	app.Group("/keyed", ratekitfiber.Middleware(f.keyed, ratekitfiber.ByHeader("X-Api-Key"), ratekitfiber.WithCore(f.apiOpts()...))).Get("/*", h)
	app.Group("/login", ratekitfiber.Middleware(f.login, key, ratekitfiber.WithCore(f.loginOpts()...))).Get("/*", h)
	return func(t *testing.T, req *http.Request) result {
		t.Helper()
		res, err := app.Test(req, -1) // no listener: fasthttp serves an in-memory conn
		if err != nil {
			t.Fatalf("fiber: %v", err)
		}
		return read(t, res)
	}
}

// recorder serves requests to h through httptest.
func recorder(h http.Handler) client {
	return func(t *testing.T, req *http.Request) result {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return read(t, rec.Result())
	}
}

func read(t *testing.T, res *http.Response) result {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{status: res.StatusCode, header: res.Header, body: string(b)}
}
