// Package ratekitfiber puts ratekit's rate-limiting pipeline into Fiber (v2):
// Middleware is a native fiber.Handler, with no conversion to net/http, that
// answers exactly as ratekit.Middleware does (the same headers, denials and
// error policies). ByIP resolves the client as ratekit.ByIP does;
// ByFrameworkIP opts in to c.IP.
//
// With InFlight limits, WithSettle or WithCountIf, an error the chain returns
// goes to the app's ErrorHandler inside the middleware. The middleware is
// safe for concurrent use. See docs/architecture.md#framework-adapters in the
// repository.
package ratekitfiber

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

// A KeyFunc names the subject a Fiber request is counted against. An empty
// key or an error goes to the key error policy; it never falls into one
// shared bucket. The returned string may alias Fiber's buffers: the
// middleware copies it.
type KeyFunc func(c *fiber.Ctx) (string, error)

// Middleware returns a Fiber handler that counts each request against l
// under the subject key names, e.g. ByIP(). Statuses, headers and bodies are
// those of ratekit.Middleware. It panics if l or key is nil, when the app
// is built.
func Middleware(l *ratekit.Limiter, key KeyFunc, opts ...Option) fiber.Handler {
	if l == nil || key == nil {
		panic("ratekit: ratekitfiber.Middleware needs a Limiter and a KeyFunc")
	}
	cfg := adapter.NewConfig(opts)
	g := adapter.NewGuard(l, cfg)
	return func(c *fiber.Ctx) error {
		if cfg.Skip != nil && cfg.Skip(c) {
			return c.Next()
		}
		k, kerr := key(c)
		k = strings.Clone(k) // Fiber reuses the buffers c.Get and c.Params point into
		v := g.Check(c.UserContext(), k, kerr, cfg.CostOf(c), c)
		if v.Err != nil {
			cfg.Report(g, c, nil, v.Err)
		}
		if v.Pass {
			if v.Reservation != nil {
				serveReserved(g, cfg, c, v.Reservation)
				return nil
			}
			return c.Next()
		}
		body := g.Render(v.Response, c)
		return c.Status(v.Response.Status).Send(body)
	}
}

// serveReserved runs the rest of the chain for a request that holds a
// Reservation and finishes it with the response status. An error the chain
// returns goes to the app's ErrorHandler here, as Fiber's logger middleware
// does, so that the status is the one the client gets.
func serveReserved(g *ratekit.Guard, cfg *adapter.Config[*fiber.Ctx], c *fiber.Ctx, res *ratekit.Reservation) {
	report := func(err error) { cfg.Report(g, c, nil, err) }
	parent := c.UserContext()
	g.Run(parent, res, report, func(ctx context.Context) int {
		c.SetUserContext(ctx)
		defer c.SetUserContext(parent) // the reservation's context is the chain's
		if err := c.Next(); err != nil {
			if err := c.App().ErrorHandler(c, err); err != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		return c.Response().StatusCode()
	})
}

// ByIP keys requests by client IP address as ratekit.ByIP does, with its
// explicit trust model: the socket peer unless clientip.TrustProxies or
// clientip.TrustHops says which proxies to believe. It never calls c.IP. It
// panics if opts are invalid, when the app is built.
func ByIP(opts ...clientip.Option) KeyFunc {
	ip, err := clientip.New(opts...)
	if err != nil {
		panic(err)
	}
	return func(c *fiber.Ctx) (string, error) {
		var peer string
		if a, ok := c.Context().RemoteAddr().(*net.TCPAddr); ok {
			peer = a.IP.String() // the bare IP: no port to format and parse again
		} else {
			peer = c.Context().RemoteAddr().String() // which the resolver rejects
		}
		return ip.KeyOf(peer, func(name string) []string {
			raw := c.Request().Header.PeekAll(name) // copied out of fasthttp's buffers
			out := make([]string, len(raw))
			for i, v := range raw {
				out[i] = string(v)
			}
			return out
		})
	}
}

// ByHeader keys requests by the first value of header name, e.g. an API key,
// as ratekit.ByHeader does. A missing or empty header is ratekit.ErrEmptyKey.
// The key aliases Fiber's buffers: it is valid while the handler runs, and
// Middleware copies it.
func ByHeader(name string) KeyFunc {
	return func(c *fiber.Ctx) (string, error) {
		v := c.Get(name)
		if v == "" {
			return "", fmt.Errorf("%w: header %s is missing", ratekit.ErrEmptyKey, name)
		}
		return v, nil
	}
}

// Join keys requests by several key functions at once, as ratekit.Join does.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }

// ByFrameworkIP keys requests by c.IP(), grouped as ratekit.ByIP groups
// addresses (IPv6 by /64). It opts in to Fiber's client-IP resolution, which
// is right only when the app's ProxyHeader names a single-address header that
// your proxy sets (X-Real-IP, CF-Connecting-IP) and EnableTrustedProxyCheck
// with TrustedProxies is on. With ProxyHeader X-Forwarded-For, c.IP returns
// the raw list (a request with several hops gets no key: 400) or, with
// EnableIPValidation, its leftmost address, which the client wrote. Prefer
// ByIP with clientip.TrustProxies, which reads X-Forwarded-For from the right.
func ByFrameworkIP() KeyFunc {
	return adapter.FrameworkIP[*fiber.Ctx, KeyFunc]("fiber", func(c *fiber.Ctx) string { return c.IP() })
}

// An Option configures Middleware. The names are ratekit's; options that
// read the request take the *fiber.Ctx.
type Option = adapter.Option[*fiber.Ctx]

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
// ratekit.ReservationFrom(c.UserContext()).
func WithSettle() Option { return core(ratekit.WithSettle()) }

// WithCountIf counts a request only when counts reports true for its
// response status, and refunds it otherwise (see ratekit.WithCountIf).
func WithCountIf(counts func(status int) bool) Option { return core(ratekit.WithCountIf(counts)) }

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers (health checks, internal callers).
func WithSkip(f func(c *fiber.Ctx) bool) Option { return adapter.WithSkip(f) }

// WithCost charges n per request instead of 1.
func WithCost(n int64) Option { return adapter.WithCost[*fiber.Ctx](n) }

// WithCostFunc charges f(c) per request; an invalid cost goes to the key
// error policy.
func WithCostFunc(f func(c *fiber.Ctx) int64) Option { return adapter.WithCostFunc(f) }

// WithErrorHandler receives every error the error policies handle (default:
// ratekit's, a slog warning at most once per second, with no request).
func WithErrorHandler(f func(c *fiber.Ctx, err error)) Option { return adapter.WithErrorHandler(f) }

// core is an option of ratekit's own, for Middleware.
func core(o ratekit.Option) Option { return adapter.Core[*fiber.Ctx](o) }
