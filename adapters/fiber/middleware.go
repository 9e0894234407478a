package ratekitfiber

import (
	"context"
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
