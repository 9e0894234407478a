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

// httpOptions are ratekit's own options, for net/http.
var httpOptions = options[ratekit.Option]{
	clock: ratekit.WithHeaderClock, policy: ratekit.WithErrorPolicy, code: ratekit.WithErrorCode,
	renderer: ratekit.WithRenderer, headers: ratekit.WithHeaders, observer: ratekit.WithObserver,
	countIf: ratekit.WithCountIf, settle: ratekit.WithSettle,
	onError: func(report func(error)) ratekit.Option {
		return ratekit.WithErrorHandler(func(_ *http.Request, err error) { report(err) })
	},
	skip: func(skip func(string) bool) ratekit.Option {
		return ratekit.WithSkip(func(r *http.Request) bool { return skip(r.URL.Path) })
	},
	cost: func(cost func(string) int64) ratekit.Option {
		return ratekit.WithCostFunc(func(r *http.Request) int64 { return cost(r.URL.Path) })
	},
}

func netHTTPApp(f *fixture) client {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", textPlain)
		_, _ = w.Write(okBody(r.URL.Path))
	})
	key, o := ratekit.ByIP(trust...), httpOptions
	mux := http.NewServeMux()
	mux.Handle("/api/", ratekit.Middleware(f.api, key, apiOpts(f, o)...)(h))
	mux.Handle("/open/", ratekit.Middleware(f.broken, key, openOpts(f, o)...)(h))
	mux.Handle("/closed/", ratekit.Middleware(f.broken, key, closedOpts(f, o)...)(h))
	mux.Handle("/hung/", ratekit.Middleware(f.hung, key, openOpts(f, o)...)(h))
	mux.Handle("/keyed/", ratekit.Middleware(f.keyed, ratekit.ByHeader("X-Api-Key"), keyedOpts(f, o)...)(h))
	mux.Handle("/login/", ratekit.Middleware(f.login, key, loginOpts(f, o)...)(h))
	held := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := f.handle(r.Context(), r.URL.Path, r.URL.Query().Get("used"))
		w.Header().Set("Content-Type", textPlain)
		w.WriteHeader(status)
		_, _ = w.Write(okBody(r.URL.Path))
	})
	mux.Handle("/conc/", ratekit.Middleware(f.conc, key, concOpts(f, o)...)(held))
	mux.Handle("/downslots/", ratekit.Middleware(f.concDown, key, openOpts(f, o)...)(held))
	mux.Handle("/counted/", ratekit.Middleware(f.counted, key, countedOpts(f, o)...)(held))
	mux.Handle("/tokens/", ratekit.Middleware(f.tokens, key, tokensOpts(f, o)...)(held))
	return recorder(mux)
}

var ginOptions = options[ratekitgin.Option]{
	clock: ratekitgin.WithHeaderClock, policy: ratekitgin.WithErrorPolicy, code: ratekitgin.WithErrorCode,
	renderer: ratekitgin.WithRenderer, headers: ratekitgin.WithHeaders, observer: ratekitgin.WithObserver,
	countIf: ratekitgin.WithCountIf, settle: ratekitgin.WithSettle,
	onError: func(report func(error)) ratekitgin.Option {
		return ratekitgin.WithErrorHandler(func(_ *gin.Context, err error) { report(err) })
	},
	skip: func(skip func(string) bool) ratekitgin.Option {
		return ratekitgin.WithSkip(func(c *gin.Context) bool { return skip(c.Request.URL.Path) })
	},
	cost: func(cost func(string) int64) ratekitgin.Option {
		return ratekitgin.WithCostFunc(func(c *gin.Context) int64 { return cost(c.Request.URL.Path) })
	},
}

func ginApp(f *fixture) client {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	h := func(c *gin.Context) { c.Data(http.StatusOK, textPlain, okBody(c.Request.URL.Path)) }
	key, o := ratekitgin.ByIP(trust...), ginOptions
	e.Group("/api", ratekitgin.Middleware(f.api, key, apiOpts(f, o)...)).GET("/*p", h)
	e.Group("/open", ratekitgin.Middleware(f.broken, key, openOpts(f, o)...)).GET("/*p", h)
	e.Group("/closed", ratekitgin.Middleware(f.broken, key, closedOpts(f, o)...)).GET("/*p", h)
	e.Group("/hung", ratekitgin.Middleware(f.hung, key, openOpts(f, o)...)).GET("/*p", h)
	e.Group("/keyed", ratekitgin.Middleware(f.keyed, ratekitgin.ByHeader("X-Api-Key"), keyedOpts(f, o)...)).GET("/*p", h)
	e.Group("/login", ratekitgin.Middleware(f.login, key, loginOpts(f, o)...)).GET("/*p", h)
	held := func(c *gin.Context) {
		status := f.handle(c.Request.Context(), c.Request.URL.Path, c.Query("used"))
		c.Data(status, textPlain, okBody(c.Request.URL.Path))
	}
	e.Group("/conc", ratekitgin.Middleware(f.conc, key, concOpts(f, o)...)).GET("/*p", held)
	e.Group("/downslots", ratekitgin.Middleware(f.concDown, key, openOpts(f, o)...)).GET("/*p", held)
	e.Group("/counted", ratekitgin.Middleware(f.counted, key, countedOpts(f, o)...)).GET("/*p", held)
	e.Group("/tokens", ratekitgin.Middleware(f.tokens, key, tokensOpts(f, o)...)).GET("/*p", held)
	return recorder(e)
}

var echoOptions = options[ratekitecho.Option]{
	clock: ratekitecho.WithHeaderClock, policy: ratekitecho.WithErrorPolicy, code: ratekitecho.WithErrorCode,
	renderer: ratekitecho.WithRenderer, headers: ratekitecho.WithHeaders, observer: ratekitecho.WithObserver,
	countIf: ratekitecho.WithCountIf, settle: ratekitecho.WithSettle,
	onError: func(report func(error)) ratekitecho.Option {
		return ratekitecho.WithErrorHandler(func(_ echo.Context, err error) { report(err) })
	},
	skip: func(skip func(string) bool) ratekitecho.Option {
		return ratekitecho.WithSkip(func(c echo.Context) bool { return skip(c.Request().URL.Path) })
	},
	cost: func(cost func(string) int64) ratekitecho.Option {
		return ratekitecho.WithCostFunc(func(c echo.Context) int64 { return cost(c.Request().URL.Path) })
	},
}

func echoApp(f *fixture) client {
	e := echo.New()
	h := func(c echo.Context) error { return c.Blob(http.StatusOK, textPlain, okBody(c.Request().URL.Path)) }
	key, o := ratekitecho.ByIP(trust...), echoOptions
	e.Group("/api", ratekitecho.Middleware(f.api, key, apiOpts(f, o)...)).GET("/*", h)
	e.Group("/open", ratekitecho.Middleware(f.broken, key, openOpts(f, o)...)).GET("/*", h)
	e.Group("/closed", ratekitecho.Middleware(f.broken, key, closedOpts(f, o)...)).GET("/*", h)
	e.Group("/hung", ratekitecho.Middleware(f.hung, key, openOpts(f, o)...)).GET("/*", h)
	e.Group("/keyed", ratekitecho.Middleware(f.keyed, ratekitecho.ByHeader("X-Api-Key"), keyedOpts(f, o)...)).GET("/*", h)
	e.Group("/login", ratekitecho.Middleware(f.login, key, loginOpts(f, o)...)).GET("/*", h)
	held := func(c echo.Context) error {
		r := c.Request()
		status := f.handle(r.Context(), r.URL.Path, c.QueryParam("used"))
		return c.Blob(status, textPlain, okBody(r.URL.Path))
	}
	e.Group("/conc", ratekitecho.Middleware(f.conc, key, concOpts(f, o)...)).GET("/*", held)
	e.Group("/downslots", ratekitecho.Middleware(f.concDown, key, openOpts(f, o)...)).GET("/*", held)
	e.Group("/counted", ratekitecho.Middleware(f.counted, key, countedOpts(f, o)...)).GET("/*", held)
	e.Group("/tokens", ratekitecho.Middleware(f.tokens, key, tokensOpts(f, o)...)).GET("/*", held)
	return recorder(e)
}

var fiberOptions = options[ratekitfiber.Option]{
	clock: ratekitfiber.WithHeaderClock, policy: ratekitfiber.WithErrorPolicy, code: ratekitfiber.WithErrorCode,
	renderer: ratekitfiber.WithRenderer, headers: ratekitfiber.WithHeaders, observer: ratekitfiber.WithObserver,
	countIf: ratekitfiber.WithCountIf, settle: ratekitfiber.WithSettle,
	onError: func(report func(error)) ratekitfiber.Option {
		return ratekitfiber.WithErrorHandler(func(_ *fiber.Ctx, err error) { report(err) })
	},
	skip: func(skip func(string) bool) ratekitfiber.Option {
		return ratekitfiber.WithSkip(func(c *fiber.Ctx) bool { return skip(c.Path()) })
	},
	cost: func(cost func(string) int64) ratekitfiber.Option {
		return ratekitfiber.WithCostFunc(func(c *fiber.Ctx) int64 { return cost(c.Path()) })
	},
}

func fiberApp(f *fixture) client {
	app := fiber.New()
	h := func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, textPlain)
		return c.Send(okBody(c.Path()))
	}
	key, o := ratekitfiber.ByIP(trust...), fiberOptions
	app.Group("/api", ratekitfiber.Middleware(f.api, key, apiOpts(f, o)...)).Get("/*", h)
	app.Group("/open", ratekitfiber.Middleware(f.broken, key, openOpts(f, o)...)).Get("/*", h)
	app.Group("/closed", ratekitfiber.Middleware(f.broken, key, closedOpts(f, o)...)).Get("/*", h)
	app.Group("/hung", ratekitfiber.Middleware(f.hung, key, openOpts(f, o)...)).Get("/*", h)
	app.Group("/keyed", ratekitfiber.Middleware(f.keyed, ratekitfiber.ByHeader("X-Api-Key"), keyedOpts(f, o)...)).Get("/*", h)
	app.Group("/login", ratekitfiber.Middleware(f.login, key, loginOpts(f, o)...)).Get("/*", h)
	held := func(c *fiber.Ctx) error {
		status := f.handle(c.UserContext(), c.Path(), c.Query("used"))
		c.Set(fiber.HeaderContentType, textPlain)
		return c.Status(status).Send(okBody(c.Path()))
	}
	app.Group("/conc", ratekitfiber.Middleware(f.conc, key, concOpts(f, o)...)).Get("/*", held)
	app.Group("/downslots", ratekitfiber.Middleware(f.concDown, key, openOpts(f, o)...)).Get("/*", held)
	app.Group("/counted", ratekitfiber.Middleware(f.counted, key, countedOpts(f, o)...)).Get("/*", held)
	app.Group("/tokens", ratekitfiber.Middleware(f.tokens, key, tokensOpts(f, o)...)).Get("/*", held)
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
