package ratekitecho

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/response"
)

// Middleware returns Echo middleware that counts each request against l
// under the subject key names, e.g. ByIP(). Statuses, headers and bodies are
// those of ratekit.Middleware. It panics if l or key is nil, when the route
// is built.
func Middleware(l *ratekit.Limiter, key KeyFunc, opts ...Option) echo.MiddlewareFunc {
	if l == nil || key == nil {
		panic("ratekit: ratekitecho.Middleware needs a Limiter and a KeyFunc")
	}
	cfg := adapter.NewConfig(opts)
	g := adapter.NewGuard(l, cfg)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			k, kerr := key(c)
			r, h := c.Request(), c.Response().Header()
			v := g.Check(r.Context(), k, kerr, cfg.CostOf(c), h)
			if v.Err != nil {
				cfg.Report(g, c, r, v.Err)
			}
			if v.Pass {
				if v.Reservation != nil {
					return serveReserved(g, cfg, c, next, v.Reservation)
				}
				return next(c)
			}
			if cfg.ReturnError {
				// The error handler owns the body and its content type; the
				// response keeps the rate-limit headers, Retry-After and
				// Cache-Control, which Render would set.
				response.SetRetry(h, time.Duration(v.Response.Context.RetryAfter)*time.Second)
				body := g.Render(v.Response, http.Header{})
				return &echo.HTTPError{Code: v.Response.Status, Message: renderedBody(body), Internal: errors.Join(v.Response, v.Err)}
			}
			body := g.Render(v.Response, h)
			c.Response().WriteHeader(v.Response.Status)
			_, err := c.Response().Write(body)
			return err
		}
	}
}

// serveReserved runs next for a request that holds a Reservation and
// finishes it with the response status. An error next returns goes to
// Echo's HTTPErrorHandler here, unless the response is committed, so that
// the status is the one the client gets; it is returned too, as Echo's
// RequestLogger does with HandleError.
func serveReserved(g *ratekit.Guard, cfg *adapter.Config[echo.Context], c echo.Context, next echo.HandlerFunc, res *ratekit.Reservation) error {
	r := c.Request()
	report := func(err error) { cfg.Report(g, c, r, err) }
	var err error
	g.Run(r.Context(), res, report, func(ctx context.Context) int {
		c.SetRequest(r.WithContext(ctx))
		defer c.SetRequest(r) // the reservation's context is the chain's, as in net/http
		if err = next(c); err != nil && !c.Response().Committed {
			c.Error(err)
		}
		return c.Response().Status
	})
	return err
}

// renderedBody is the Message of the *echo.HTTPError returned in ReturnError
// mode: it marshals to the rendered body as is, and prints as text in
// HTTPError.Error.
type renderedBody []byte

func (b renderedBody) MarshalJSON() ([]byte, error) { return b, nil }

func (b renderedBody) String() string { return string(b) }
