package ratekitgin

import (
	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
)

// An Option configures Middleware and GinMiddleware.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	core []ratekit.Option
	skip func(c *gin.Context) bool
	cost func(c *gin.Context) int64
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
func WithSkip(f func(c *gin.Context) bool) Option {
	return optionFunc(func(c *config) { c.skip = f })
}

// WithCost charges n per request instead of 1.
func WithCost(n int64) Option {
	return WithCostFunc(func(*gin.Context) int64 { return n })
}

// WithCostFunc charges f(c) per request. An invalid cost (below 0 or above
// ratekit.MaxCost) goes to the error policy.
func WithCostFunc(f func(c *gin.Context) int64) Option {
	return optionFunc(func(c *config) { c.cost = f })
}
