package adapter

import (
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
)

// An Option configures an adapter's middleware for framework context type C
// (*gin.Context, echo.Context, *fiber.Ctx). Adapters declare the option
// functions under the same names as ratekit's (WithHeaders, WithSkip, ...),
// each returning one of these, so that an option meant for another framework
// does not compile.
type Option[C any] func(*Config[C])

// Config is what an adapter's options set. Build it with NewConfig.
type Config[C any] struct {
	coreOpts []ratekit.Option
	// Skip lets requests for which it returns true through, uncounted.
	Skip func(c C) bool
	// Cost returns what a request costs (nil: 1).
	Cost func(c C) int64
	// OnError receives every error the error policies handle (nil: the core
	// error handler, through Guard.Report).
	OnError func(c C, err error)
	// ReturnError asks the adapter to return denials and fail-closed errors
	// to the framework's error handler instead of writing them, where the
	// framework's handlers return errors.
	ReturnError bool
}

// NewConfig applies opts.
func NewConfig[C any](opts []Option[C]) *Config[C] {
	c := &Config[C]{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// CostOf returns what the request behind c costs: Cost(c), or 1.
func (cfg *Config[C]) CostOf(c C) int64 {
	if cfg.Cost != nil {
		return cfg.Cost(c)
	}
	return 1
}

func coreOption[C any](o ratekit.Option) Option[C] {
	return func(c *Config[C]) { c.coreOpts = append(c.coreOpts, o) }
}

// WithHeaders is ratekit.WithHeaders for an adapter.
func WithHeaders[C any](mode ratekit.HeaderMode) Option[C] {
	return coreOption[C](ratekit.WithHeaders(mode))
}

// WithRenderer is ratekit.WithRenderer for an adapter.
func WithRenderer[C any](r ratekit.Renderer) Option[C] { return coreOption[C](ratekit.WithRenderer(r)) }

// WithErrorCode is ratekit.WithErrorCode for an adapter.
func WithErrorCode[C any](code ratekit.ErrorCode) Option[C] {
	return coreOption[C](ratekit.WithErrorCode(code))
}

// WithErrorPolicy is ratekit.WithErrorPolicy for an adapter.
func WithErrorPolicy[C any](p ratekit.ErrorPolicy) Option[C] {
	return coreOption[C](ratekit.WithErrorPolicy(p))
}

// WithKeyErrorPolicy is ratekit.WithKeyErrorPolicy for an adapter.
func WithKeyErrorPolicy[C any](p ratekit.ErrorPolicy) Option[C] {
	return coreOption[C](ratekit.WithKeyErrorPolicy(p))
}

// WithTimeout is ratekit.WithTimeout for an adapter.
func WithTimeout[C any](d time.Duration) Option[C] { return coreOption[C](ratekit.WithTimeout(d)) }

// WithClock is ratekit.WithClock for an adapter.
func WithClock[C any](now func() time.Time) Option[C] { return coreOption[C](ratekit.WithClock(now)) }

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers.
func WithSkip[C any](f func(c C) bool) Option[C] { return func(c *Config[C]) { c.Skip = f } }

// WithCost charges n per request instead of 1.
func WithCost[C any](n int64) Option[C] { return WithCostFunc(func(C) int64 { return n }) }

// WithCostFunc charges f(c) per request; an invalid cost goes to the key
// error policy.
func WithCostFunc[C any](f func(c C) int64) Option[C] { return func(c *Config[C]) { c.Cost = f } }

// WithErrorHandler receives every error the error policies handle.
func WithErrorHandler[C any](f func(c C, err error)) Option[C] {
	return func(c *Config[C]) { c.OnError = f }
}

// WithReturnError sets Config.ReturnError.
func WithReturnError[C any]() Option[C] { return func(c *Config[C]) { c.ReturnError = true } }

// WithObserver reports every decision to obs (see ratekit.WithObserver).
func WithObserver[C any](obs ...observe.Observer) Option[C] {
	return coreOption[C](ratekit.WithObserver(obs...))
}
