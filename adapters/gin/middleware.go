package ratekitgin

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
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
