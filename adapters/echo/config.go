package ratekitecho

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratekit/ratekit"
)

// Config configures MiddlewareWithConfig, in the style of Echo's own
// middleware configs. Limiter and KeyFunc are required.
type Config struct {
	// Skipper lets requests for which it returns true through, uncounted and
	// without rate-limit headers. Default: middleware.DefaultSkipper.
	Skipper middleware.Skipper

	// Limiter decides. Required.
	Limiter *ratekit.Limiter

	// KeyFunc names the subject a request is counted against. Required; use
	// HTTPKey to adapt a ratekit.KeyFunc such as ratekit.ByIP().
	KeyFunc KeyFunc

	// CostFunc returns what a request costs. Default: 1. An invalid cost goes
	// to the error policy.
	CostFunc func(c echo.Context) int64

	// Options are core options for the ratekit.Guard: headers, renderer,
	// error code, error policies, error handler, timeout and clock. The core
	// options that take an *http.Request (ratekit.WithSkip, WithCost,
	// WithCostFunc, WithDeniedHandler) are not applied; use Skipper and
	// CostFunc.
	Options []ratekit.Option

	// ReturnError makes a denial or a fail-closed error return an
	// *echo.HTTPError for the HTTPErrorHandler instead of writing the
	// response (see the package documentation).
	ReturnError bool
}

// A KeyFunc names the subject an Echo request is counted against. An empty
// key or an error goes to the error policy; it never falls into one shared
// bucket.
type KeyFunc func(c echo.Context) (string, error)
