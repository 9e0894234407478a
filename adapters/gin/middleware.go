package ratekitgin

import (
	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
)

// Middleware returns Gin middleware that counts each request against l under
// the subject key names from c.Request, e.g. ratekit.ByIP(). Statuses,
// headers and bodies are those of ratekit.Middleware; a denied request and a
// fail-closed error are answered and aborted.
//
// Middleware panics if l or key is nil: that is a programming error found
// when the route is built, never at request time.
func Middleware(l *ratekit.Limiter, key ratekit.KeyFunc, opts ...Option) gin.HandlerFunc {
	if key == nil {
		panic("ratekit: ratekitgin.Middleware needs a Limiter and a KeyFunc")
	}
	return GinMiddleware(l, func(c *gin.Context) (string, error) { return key(c.Request) }, opts...)
}

// GinMiddleware is Middleware with a key function that reads the
// *gin.Context. It panics if l or key is nil.
func GinMiddleware(l *ratekit.Limiter, key GinKeyFunc, opts ...Option) gin.HandlerFunc {
	if l == nil || key == nil {
		panic("ratekit: ratekitgin.GinMiddleware needs a Limiter and a GinKeyFunc")
	}
	cfg := newConfig(opts)
	g := ratekit.NewGuard(l, cfg.core...)
	return func(c *gin.Context) {
		if cfg.skip != nil && cfg.skip(c) {
			return
		}
		k, kerr := key(c)
		cost := int64(1)
		if cfg.cost != nil {
			cost = cfg.cost(c)
		}
		h := c.Writer.Header()
		v := g.Check(c.Request.Context(), k, kerr, cost, h)
		if v.Err != nil {
			g.ReportError(c.Request, v.Err)
		}
		if v.Pass {
			return // Gin runs the next handler when this one returns
		}
		c.Abort()
		body := g.Render(v.Response, h)
		c.Writer.WriteHeader(v.Response.Status)
		_, _ = c.Writer.Write(body)
	}
}
