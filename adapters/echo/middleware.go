// Package ratekitecho puts ratekit's rate-limiting pipeline into Echo (v4):
// Middleware answers exactly as ratekit.Middleware does on net/http (the
// same headers, denials and error policies). ByIP keeps ratekit's trust
// model and never calls c.RealIP, which ByFrameworkIP opts in to.
//
// The middleware writes a denial or a fail-closed error itself, bypassing
// Echo's HTTPErrorHandler. With WithReturnError it returns an *echo.HTTPError
// instead: Code is the status, Message the rendered JSON body (a
// json.Marshaler), Internal wraps the *response.Error and any
// underlying error; the rate-limit headers stay on the response.
//
// With InFlight limits, WithSettle or WithCountIf, an error the chain returns
// goes to the HTTPErrorHandler inside the middleware, so a custom one should
// return early when c.Response().Committed. The middleware is safe for
// concurrent use. See docs/architecture.md#framework-adapters in the
// repository.
package ratekitecho

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/observe"
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
				// response gets the Retry-After and Cache-Control Render would set.
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

// A KeyFunc names the subject an Echo request is counted against. An empty key
// or an error goes to the key error policy; it never falls into one shared
// bucket.
type KeyFunc func(c echo.Context) (string, error)

// FromHTTP adapts a net/http key function such as ratekit.ByHeader: it
// applies key to c.Request(). FromHTTP(nil) is nil.
func FromHTTP(key ratekit.KeyFunc) KeyFunc {
	if key == nil {
		return nil
	}
	return func(c echo.Context) (string, error) { return key(c.Request()) }
}

// ByIP keys requests by client IP address as ratekit.ByIP does, with its
// explicit trust model: the socket peer unless clientip.TrustProxies or
// clientip.TrustHops says which proxies to believe. It never calls
// c.RealIP. It panics if opts are invalid, when the route is built.
func ByIP(opts ...clientip.Option) KeyFunc { return FromHTTP(ratekit.ByIP(opts...)) }

// ByHeader keys requests by the first value of header name, e.g. an API key.
// A missing or empty header is ratekit.ErrEmptyKey.
func ByHeader(name string) KeyFunc { return FromHTTP(ratekit.ByHeader(name)) }

// Join keys requests by several key functions at once, as ratekit.Join does.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }

// ByFrameworkIP keys requests by c.RealIP(), grouped as ratekit.ByIP groups
// addresses (IPv6 by /64). It opts in to Echo's client-IP resolution: use it
// only when the Echo instance has an IPExtractor that trusts your proxies,
// because without one RealIP returns the leftmost X-Forwarded-For value,
// which any client can write. Prefer ByIP with clientip.TrustProxies.
func ByFrameworkIP() KeyFunc {
	return adapter.FrameworkIP[echo.Context, KeyFunc]("echo", func(c echo.Context) string { return c.RealIP() })
}

// An Option configures Middleware. The names are ratekit's; options that
// read the request take the echo.Context.
type Option = adapter.Option[echo.Context]

// WithHeaders selects the rate-limit headers (see ratekit.WithHeaders).
func WithHeaders(mode ratekit.HeaderMode) Option { return core(ratekit.WithHeaders(mode)) }

// WithRenderer selects the body renderer (see ratekit.WithRenderer).
func WithRenderer(r response.Renderer) Option { return core(ratekit.WithRenderer(r)) }

// WithErrorCode sets the code of denial bodies (see ratekit.WithErrorCode).
func WithErrorCode(code response.Code) Option { return core(ratekit.WithErrorCode(code)) }

// WithErrorPolicy sets what a store failure gives (see ratekit.WithErrorPolicy).
func WithErrorPolicy(p ratekit.ErrorPolicy) Option { return core(ratekit.WithErrorPolicy(p)) }

// WithKeyErrorPolicy sets what a key or cost error gives (see
// ratekit.WithKeyErrorPolicy).
func WithKeyErrorPolicy(p ratekit.ErrorPolicy) Option { return core(ratekit.WithKeyErrorPolicy(p)) }

// WithTimeout bounds each store call (see ratekit.WithTimeout).
func WithTimeout(d time.Duration) Option { return core(ratekit.WithTimeout(d)) }

// WithHeaderClock sets the clock X-RateLimit-Reset counts from (see
// ratekit.WithHeaderClock).
func WithHeaderClock(now func() time.Time) Option { return core(ratekit.WithHeaderClock(now)) }

// WithObserver reports every decision to obs (see ratekit.WithObserver).
func WithObserver(obs ...observe.Observer) Option { return core(ratekit.WithObserver(obs...)) }

// WithSettle lets handlers settle a request's real cost after the fact
// (see ratekit.WithSettle); a handler finds the request's Reservation with
// ratekit.ReservationFrom(c.Request().Context()).
func WithSettle() Option { return core(ratekit.WithSettle()) }

// WithCountIf counts a request only when counts reports true for its
// response status, and refunds it otherwise (see ratekit.WithCountIf).
func WithCountIf(counts func(status int) bool) Option { return core(ratekit.WithCountIf(counts)) }

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers (health checks, internal callers).
func WithSkip(f func(c echo.Context) bool) Option { return adapter.WithSkip(f) }

// WithCost charges n per request instead of 1.
func WithCost(n int64) Option { return adapter.WithCost[echo.Context](n) }

// WithCostFunc charges f(c) per request; an invalid cost goes to the key
// error policy.
func WithCostFunc(f func(c echo.Context) int64) Option { return adapter.WithCostFunc(f) }

// WithErrorHandler receives every error the error policies handle (default:
// ratekit's, a slog warning at most once per second).
func WithErrorHandler(f func(c echo.Context, err error)) Option { return adapter.WithErrorHandler(f) }

// WithReturnError returns denials and fail-closed errors as an
// *echo.HTTPError for the HTTPErrorHandler instead of writing them (see the
// package documentation).
func WithReturnError() Option { return adapter.WithReturnError[echo.Context]() }

// core is an option of ratekit's own, for Middleware.
func core(o ratekit.Option) Option { return adapter.Core[echo.Context](o) }
