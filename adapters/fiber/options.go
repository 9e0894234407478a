package ratekitfiber

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ratekit/ratekit"
)

// An Option configures Middleware.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	core    []ratekit.Option
	skip    func(c *fiber.Ctx) bool
	cost    func(c *fiber.Ctx) int64
	onError func(c *fiber.Ctx, err error)
}

func newConfig(opts []Option) *config {
	c := &config{}
	for _, o := range opts {
		o.apply(c)
	}
	return c
}

// WithCore passes core options to the middleware's ratekit.Guard: headers,
// renderer, error code, error policies, error handler, timeout and clock. It
// may be given more than once; the options add up.
func WithCore(opts ...ratekit.Option) Option {
	return optionFunc(func(c *config) { c.core = append(c.core, opts...) })
}

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers (health checks, internal callers).
func WithSkip(f func(c *fiber.Ctx) bool) Option {
	return optionFunc(func(c *config) { c.skip = f })
}

// WithCost charges n per request instead of 1.
func WithCost(n int64) Option {
	return WithCostFunc(func(*fiber.Ctx) int64 { return n })
}

// WithCostFunc charges f(c) per request. An invalid cost (below 0 or above
// ratekit.MaxCost) goes to the error policy.
func WithCostFunc(f func(c *fiber.Ctx) int64) Option {
	return optionFunc(func(c *config) { c.cost = f })
}

// WithErrorHandler is called with every error the error policy handles (the
// store failed or timed out, the key function failed, the cost is invalid),
// instead of the core's error handler. Default: the core's handler
// (ratekit.WithErrorHandler, by default a throttled slog warning), called
// with a nil *http.Request.
func WithErrorHandler(f func(c *fiber.Ctx, err error)) Option {
	return optionFunc(func(c *config) { c.onError = f })
}
