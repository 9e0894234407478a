// Package adapter is for authors of framework adapters: generic options and
// key functions over a framework's context type, on top of ratekit.Guard, so
// that every framework answers with the statuses, headers and bodies of
// net/http. Users of an existing adapter do not need it. See
// docs/architecture.md#framework-adapters in the repository.
package adapter

import (
	"net/http"

	"github.com/ratekit/ratekit"
)

// An Option configures an adapter's middleware for framework context type C
// (*gin.Context, echo.Context, *fiber.Ctx), so that an option meant for
// another framework does not compile. Adapters declare ratekit's option
// names on Core and on the functions of this package.
type Option[C any] interface{ apply(*Config[C]) }

// optionFunc adapts a function to Option.
type optionFunc[C any] func(*Config[C])

func (f optionFunc[C]) apply(c *Config[C]) { f(c) }

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
		if o != nil {
			o.apply(c)
		}
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

// Report hands err, an error the error policies handled or a store error
// of a reservation, to OnError when it is set, else to g.Report with r: the
// request, where the framework has a net/http one, or nil.
func (cfg *Config[C]) Report(g *ratekit.Guard, c C, r *http.Request, err error) {
	if cfg.OnError != nil {
		cfg.OnError(c, err)
		return
	}
	g.Report(r, err)
}

// Core turns ratekit's own options (ratekit.WithHeaders, WithTimeout, ...)
// into an adapter option: adapters declare their WithHeaders, WithTimeout
// and the rest on it, so that the transport-neutral options keep ratekit's
// meaning and defaults.
func Core[C any](opts ...ratekit.Option) Option[C] {
	return optionFunc[C](func(c *Config[C]) { c.coreOpts = append(c.coreOpts, opts...) })
}

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers.
func WithSkip[C any](f func(c C) bool) Option[C] {
	return optionFunc[C](func(c *Config[C]) { c.Skip = f })
}

// WithCost charges n per request instead of 1.
func WithCost[C any](n int64) Option[C] { return WithCostFunc(func(C) int64 { return n }) }

// WithCostFunc charges f(c) per request; an invalid cost goes to the key
// error policy.
func WithCostFunc[C any](f func(c C) int64) Option[C] {
	return optionFunc[C](func(c *Config[C]) { c.Cost = f })
}

// WithErrorHandler receives every error the error policies handle.
func WithErrorHandler[C any](f func(c C, err error)) Option[C] {
	return optionFunc[C](func(c *Config[C]) { c.OnError = f })
}

// WithReturnError sets Config.ReturnError.
func WithReturnError[C any]() Option[C] {
	return optionFunc[C](func(c *Config[C]) { c.ReturnError = true })
}
