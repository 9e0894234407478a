package ratekitecho

import (
	"errors"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratekit/ratekit"
)

// Middleware returns Echo middleware that counts each request against l under
// the subject key names from c.Request(), e.g. ratekit.ByIP(), with core
// options opts. Statuses, headers and bodies are those of ratekit.Middleware.
// It panics if l or key is nil.
func Middleware(l *ratekit.Limiter, key ratekit.KeyFunc, opts ...ratekit.Option) echo.MiddlewareFunc {
	return MiddlewareWithConfig(Config{Limiter: l, KeyFunc: HTTPKey(key), Options: opts})
}

// MiddlewareWithConfig returns Echo middleware configured by cfg. It panics if
// cfg.Limiter or cfg.KeyFunc is nil, as Echo's middleware do with an invalid
// config: that is found when the route is built, never at request time.
func MiddlewareWithConfig(cfg Config) echo.MiddlewareFunc {
	if cfg.Limiter == nil || cfg.KeyFunc == nil {
		panic("ratekit: ratekitecho needs a Limiter and a KeyFunc")
	}
	if cfg.Skipper == nil {
		cfg.Skipper = middleware.DefaultSkipper
	}
	m := &middlewareState{cfg: cfg, guard: ratekit.NewGuard(cfg.Limiter, cfg.Options...)}
	// Echo applies e.Use middleware to each request anew: the closure
	// captures one pointer so that this costs one small allocation.
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return m.serve(c, next) }
	}
}

type middlewareState struct {
	cfg   Config
	guard *ratekit.Guard
}

func (m *middlewareState) serve(c echo.Context, next echo.HandlerFunc) error {
	cfg, g := &m.cfg, m.guard
	if cfg.Skipper(c) {
		return next(c)
	}
	k, kerr := cfg.KeyFunc(c)
	cost := int64(1)
	if cfg.CostFunc != nil {
		cost = cfg.CostFunc(c)
	}
	r, h := c.Request(), c.Response().Header()
	v := g.Check(r.Context(), k, kerr, cost, h)
	if v.Err != nil {
		g.ReportError(r, v.Err)
	}
	if v.Pass {
		return next(c)
	}
	if cfg.ReturnError {
		// The error handler owns the body and its content type; the response
		// keeps the rate-limit headers, Retry-After and Cache-Control.
		ratekit.WriteRetryHeaders(h, v.Response.RetryAfter())
		body := g.Render(v.Response, noHeaders{})
		return &echo.HTTPError{Code: v.Response.Status, Message: renderedBody(body), Internal: errors.Join(v.Response, v.Err)}
	}
	body := g.Render(v.Response, h)
	c.Response().WriteHeader(v.Response.Status)
	_, err := c.Response().Write(body)
	return err
}

// renderedBody is the Message of the *echo.HTTPError returned in ReturnError
// mode: it marshals to the rendered body as is, and prints as text in
// HTTPError.Error.
type renderedBody []byte

// MarshalJSON returns the body unchanged.
func (b renderedBody) MarshalJSON() ([]byte, error) { return b, nil }

// String returns the body as text.
func (b renderedBody) String() string { return string(b) }

// noHeaders drops the headers Render sets, for ReturnError mode.
type noHeaders struct{}

// Set does nothing.
func (noHeaders) Set(string, string) {}
