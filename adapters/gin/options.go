package ratekitgin

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

// An Option configures Middleware. The names are ratekit's; options that
// read the request take the *gin.Context.
type Option = adapter.Option[*gin.Context]

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
// ratekit.ReservationFrom(c.Request.Context()).
func WithSettle() Option { return core(ratekit.WithSettle()) }

// WithCountIf counts a request only when counts reports true for its
// response status, and refunds it otherwise (see ratekit.WithCountIf).
func WithCountIf(counts func(status int) bool) Option { return core(ratekit.WithCountIf(counts)) }

// WithSkip lets requests for which f returns true through, uncounted and
// without rate-limit headers (health checks, internal callers).
func WithSkip(f func(c *gin.Context) bool) Option { return adapter.WithSkip(f) }

// WithCost charges n per request instead of 1.
func WithCost(n int64) Option { return adapter.WithCost[*gin.Context](n) }

// WithCostFunc charges f(c) per request; an invalid cost goes to the key
// error policy.
func WithCostFunc(f func(c *gin.Context) int64) Option { return adapter.WithCostFunc(f) }

// WithErrorHandler receives every error the error policies handle (default:
// ratekit's, a slog warning at most once per second).
func WithErrorHandler(f func(c *gin.Context, err error)) Option { return adapter.WithErrorHandler(f) }

// core is an option of ratekit's own, for Middleware.
func core(o ratekit.Option) Option { return adapter.Core[*gin.Context](o) }
