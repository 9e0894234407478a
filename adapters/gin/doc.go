// Package ratekitgin puts ratekit's rate-limiting pipeline into Gin.
//
// Middleware(limiter, key, opts...) returns a gin.HandlerFunc that answers
// exactly as ratekit.Middleware does: the same headers, denials and error
// policies; it writes a denial or a fail-closed error and calls c.Abort.
// Options have ratekit's names; those that read the request take the
// *gin.Context. ByIP keeps ratekit's trust model; ByFrameworkIP opts in to
// c.ClientIP for engines whose trusted proxies are configured. With InFlight
// limits, WithSettle or WithCountIf, handlers find the request's Reservation
// with ratekit.ReservationFrom(c.Request.Context()).
//
// The middleware is safe for concurrent use. See
// docs/architecture.md#framework-adapters in the repository.
package ratekitgin
