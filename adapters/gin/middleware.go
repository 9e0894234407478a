// Package ratekitgin puts ratekit's rate-limiting pipeline into Gin:
// Middleware answers exactly as ratekit.Middleware does (the same headers,
// denials and error policies) and aborts the chain on a denial or a
// fail-closed error. ByIP keeps ratekit's trust model; ByFrameworkIP opts in
// to c.ClientIP. The middleware is safe for concurrent use. See
// docs/architecture.md#framework-adapters in the repository.
package ratekitgin

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

// Middleware returns Gin middleware that counts each request against l under
// the subject key names, e.g. ByIP(). Statuses, headers and bodies are those
// of ratekit.Middleware; a denied request and a fail-closed error are
// answered and aborted, so later handlers do not run. It panics if l or key
// is nil, when the route is built.
func Middleware(l *ratekit.Limiter, key KeyFunc, opts ...Option) gin.HandlerFunc {
	if l == nil || key == nil {
		panic("ratekit: ratekitgin.Middleware needs a Limiter and a KeyFunc")
	}
	cfg := adapter.NewConfig(opts)
	g := adapter.NewGuard(l, cfg)
	return func(c *gin.Context) {
		if cfg.Skip != nil && cfg.Skip(c) {
			return
		}
		k, kerr := key(c)
		v := g.Check(c.Request.Context(), k, kerr, cfg.CostOf(c), c.Writer.Header())
		if v.Err != nil {
			cfg.Report(g, c, c.Request, v.Err)
		}
		if v.Pass {
			if v.Reservation != nil {
				serveReserved(g, cfg, c, v.Reservation)
			}
			return // else Gin runs the next handler when this one returns
		}
		c.Abort()
		g.Refuse(c.Writer, c.Request, v)
	}
}

// serveReserved runs the rest of the chain for a request that holds a
// Reservation and finishes it with the response status.
func serveReserved(g *ratekit.Guard, cfg *adapter.Config[*gin.Context], c *gin.Context, res *ratekit.Reservation) {
	r := c.Request
	report := func(err error) { cfg.Report(g, c, r, err) }
	g.Run(r.Context(), res, report, func(ctx context.Context) int {
		c.Request = r.WithContext(ctx)
		defer func() { c.Request = r }() // the reservation's context is the chain's, as in net/http
		c.Next()
		return c.Writer.Status()
	})
}

// A KeyFunc names the subject a Gin request is counted against. An empty key
// or an error goes to the key error policy; it never falls into one shared
// bucket.
type KeyFunc func(c *gin.Context) (string, error)

// FromHTTP adapts a net/http key function such as ratekit.ByHeader: it
// applies key to c.Request. FromHTTP(nil) is nil.
func FromHTTP(key ratekit.KeyFunc) KeyFunc {
	if key == nil {
		return nil
	}
	return func(c *gin.Context) (string, error) { return key(c.Request) }
}

// ByIP keys requests by client IP address as ratekit.ByIP does, with its
// explicit trust model: the socket peer unless clientip.TrustProxies or
// clientip.TrustHops says which proxies to believe. It never calls
// c.ClientIP. It panics if opts are invalid, when the route is built.
func ByIP(opts ...clientip.Option) KeyFunc { return FromHTTP(ratekit.ByIP(opts...)) }

// ByHeader keys requests by the first value of header name, e.g. an API key.
// A missing or empty header is ratekit.ErrEmptyKey.
func ByHeader(name string) KeyFunc { return FromHTTP(ratekit.ByHeader(name)) }

// Join keys requests by several key functions at once, as ratekit.Join does.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }

// ByFrameworkIP keys requests by c.ClientIP(), grouped as ratekit.ByIP
// groups addresses (IPv6 by /64). It opts in to Gin's own client-IP
// resolution: use it only when the engine's trusted proxies are configured
// (engine.SetTrustedProxies or TrustedPlatform), because a default Gin engine
// trusts every proxy and reads X-Forwarded-For from any client. Prefer ByIP
// with clientip.TrustProxies.
func ByFrameworkIP() KeyFunc {
	return adapter.FrameworkIP[*gin.Context, KeyFunc]("gin", func(c *gin.Context) string { return c.ClientIP() })
}

// An Option configures Middleware. The names are ratekit's; options that
// read the request take the *gin.Context.
type Option = adapter.Option[*gin.Context]

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
// ratekit.ReservationFrom(c.Request.Context()).
func WithSettle() Option { return core(ratekit.WithSettle()) }

// WithCountIf counts a request only when counts reports true for its
// response status, and refunds it otherwise (see ratekit.WithCountIf).
func WithCountIf(counts func(status int) bool) Option { return core(ratekit.WithCountIf(counts)) }

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers (health checks, internal callers).
func WithSkip(f func(c *gin.Context) bool) Option { return adapter.WithSkip(f) }

// WithCost charges n per request instead of 1.
func WithCost(n int64) Option { return adapter.WithCost[*gin.Context](n) }

// WithCostFunc charges f(c) per request; an invalid cost goes to the key
// error policy.
func WithCostFunc(f func(c *gin.Context) int64) Option { return adapter.WithCostFunc(f) }

// WithErrorHandler receives every error the error policies handle (default:
// ratekit's, a slog warning at most once per second).
func WithErrorHandler(f func(c *gin.Context, err error)) Option { return adapter.WithErrorHandler(f) }

// core is an option of ratekit's own, for Middleware.
func core(o ratekit.Option) Option { return adapter.Core[*gin.Context](o) }
