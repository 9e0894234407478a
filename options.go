package ratekit

import (
	"net/http"
	"time"

	"github.com/ratekit/ratekit/response"

	"github.com/ratekit/ratekit/internal/throttle"
	"github.com/ratekit/ratekit/observe"
)

// An Option configures Middleware. Options are values built by the With
// functions of this package, safe to share; the framework adapters offer the
// same names. A nil Option is a programming error.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// ErrorPolicy says what a request gets when no decision can be made, for a
// store failure (WithErrorPolicy) or for a request with no usable key or
// cost (WithKeyErrorPolicy); the zero value is FailOpen.
type ErrorPolicy uint8

// Error policies.
const (
	// FailOpen lets the request through without rate-limit headers, and
	// reports the error to the error handler.
	FailOpen ErrorPolicy = iota
	// FailClosed answers 503 (store failures) or 400 (key and cost errors;
	// 413 for a body too large), with a JSON body.
	FailClosed
)

// DefaultTimeout bounds each store call made by Middleware.
const DefaultTimeout = 100 * time.Millisecond

type config struct {
	headers   HeaderMode
	denied    func(w http.ResponseWriter, r *http.Request, d Decision)
	render    response.Renderer
	code      response.Code
	policy    ErrorPolicy
	keyPolicy ErrorPolicy
	onError   func(r *http.Request, err error)
	cost      func(r *http.Request) int64
	skip      func(r *http.Request) bool
	timeout   time.Duration
	now       func() time.Time // WithHeaderClock
	observer  observe.Observer
	settle    bool // WithSettle
	countIf   func(status int) bool
}

func newConfig(opts []Option) *config {
	c := &config{
		headers:   HeadersDefault,
		code:      response.CodeRateLimited,
		keyPolicy: FailClosed,
		timeout:   DefaultTimeout,
		now:       time.Now,
	}
	for _, o := range opts {
		o.apply(c)
	}
	if c.onError == nil {
		c.onError = throttle.New().Error
	}
	return c
}

// WithHeaders selects the rate-limit headers (default HeadersDefault: legacy
// and IETF).
func WithHeaders(mode HeaderMode) Option {
	return optionFunc(func(c *config) { c.headers = mode })
}

// WithDeniedHandler replaces the 429 response. The rate-limit headers and
// Retry-After are set before f is called; f writes the status and body.
func WithDeniedHandler(f func(w http.ResponseWriter, r *http.Request, d Decision)) Option {
	return optionFunc(func(c *config) { c.denied = f })
}

// WithRenderer selects the body renderer of 429 and 503 responses (default
// response.JSON; response.Problem gives RFC 9457 problem+json).
func WithRenderer(r response.Renderer) Option {
	return optionFunc(func(c *config) { c.render = r })
}

// WithErrorCode sets the code of denial bodies (default response.CodeRateLimited).
func WithErrorCode(code response.Code) Option {
	return optionFunc(func(c *config) { c.code = code })
}

// WithErrorPolicy sets what happens when the store fails or times out
// (default FailOpen: a Redis outage does not take the service down).
func WithErrorPolicy(p ErrorPolicy) Option {
	return optionFunc(func(c *config) { c.policy = p })
}

// WithKeyErrorPolicy sets what happens when the key function fails or gives
// an empty key, or the cost is invalid (default FailClosed, so that leaving
// out a header never skips the limit). FailOpen lets such requests through
// uncounted, with their body whole.
func WithKeyErrorPolicy(p ErrorPolicy) Option {
	return optionFunc(func(c *config) { c.keyPolicy = p })
}

// WithErrorHandler is called with every error the error policy handles
// (default: a slog warning at most once per second, with a count).
func WithErrorHandler(f func(r *http.Request, err error)) Option {
	return optionFunc(func(c *config) { c.onError = f })
}

// WithCost charges n per request instead of 1.
func WithCost(n int64) Option {
	return WithCostFunc(func(*http.Request) int64 { return n })
}

// WithCostFunc charges f(r) per request. An invalid cost (below 0 or above
// 2^53-1) goes to the key error policy.
func WithCostFunc(f func(r *http.Request) int64) Option {
	return optionFunc(func(c *config) { c.cost = f })
}

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers (health checks, internal callers).
func WithSkip(f func(r *http.Request) bool) Option {
	return optionFunc(func(c *config) { c.skip = f })
}

// WithTimeout bounds each store call (default DefaultTimeout, 100 ms); 0 or
// less means only the request's own context bounds it. A call that runs out
// of time follows the error policy. A store that never blocks
// (store.NonBlocking, such as store/memstore) is called without a timeout.
// The call keeps the request context's values but not its cancellation
// (see docs/architecture.md, "The pipeline").
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.timeout = d })
}

// WithObserver reports every decision to obs (see package observe): metrics,
// decision logs, alerts. Several WithObserver options add up; nil observers
// are ignored. Observers are called on the request's goroutine, after the
// decision and before the response.
func WithObserver(obs ...observe.Observer) Option {
	return optionFunc(func(c *config) { c.observer = observe.Join(append([]observe.Observer{c.observer}, obs...)...) })
}

// WithHeaderClock sets the clock that X-RateLimit-Reset counts from
// (default: the wall clock). Decisions use the store's clock, which
// memstore.WithClock sets for the in-process store.
func WithHeaderClock(now func() time.Time) Option {
	return optionFunc(func(c *config) {
		if now != nil {
			c.now = now
		}
	})
}
