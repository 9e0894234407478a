// Package ratekitgin puts ratekit's rate-limiting pipeline into Gin.
//
// Middleware(limiter, key, opts...) returns a gin.HandlerFunc that answers
// exactly as ratekit.Middleware does on net/http: the same rate-limit headers
// on every decided request, the same 429 with Retry-After, Cache-Control:
// no-store and JSON body on a denial, and the same error policies when no
// decision can be made. On a denial or a fail-closed error the middleware
// writes the response and calls c.Abort, so later handlers do not run.
//
// Keys are Gin-native (KeyFunc takes the *gin.Context): ByIP keeps ratekit's
// explicit trust model (only the socket peer unless trusted proxies are
// configured), ByHeader and Join mirror ratekit's, FromHTTP adapts any
// ratekit.KeyFunc, and ByFrameworkIP opts in to c.ClientIP for engines whose
// trusted proxies are configured.
//
// Options have ratekit's names (WithHeaders, WithErrorPolicy, WithTimeout,
// WithSkip, WithCost, ...); those that read the request take the
// *gin.Context. The Echo and Fiber adapters offer the same names.
//
// # In-flight limits and charges settled after the response
//
// With a ratekit.InFlight limit, WithSettle or WithCountIf, the middleware
// runs the rest of the chain itself (c.Next) holding the request's
// ratekit.Reservation, which handlers find with
// ratekit.ReservationFrom(c.Request.Context()). Once the chain returns it
// finishes the reservation with c.Writer.Status() (a panic counts as 500
// and goes on to gin.Recovery), and it releases the InFlight slot then, when
// the handler returns.
//
// The middleware is safe for concurrent use, like the Limiter it wraps.
package ratekitgin
