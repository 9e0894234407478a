package ratekitfiber

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
)

// A KeyFunc names the subject a Fiber request is counted against. An empty
// key or an error goes to the key error policy; it never falls into one
// shared bucket. The returned string may alias Fiber's buffers: the
// middleware copies it.
type KeyFunc func(c *fiber.Ctx) (string, error)

// Middleware returns a Fiber handler that counts each request against l
// under the subject key names, e.g. ByIP(). Statuses, headers and bodies are
// those of ratekit.Middleware.
//
// Middleware panics if l or key is nil: that is a programming error found
// when the app is built, never at request time.
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
			if cfg.OnError != nil {
				cfg.OnError(c, v.Err)
			} else {
				g.Report(nil, v.Err)
			}
		}
		if v.Pass {
			return c.Next()
		}
		body := g.Render(v.Response, c)
		return c.Status(v.Response.Status).Send(body)
	}
}
