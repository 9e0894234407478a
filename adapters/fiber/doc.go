// Package ratekitfiber puts ratekit's rate-limiting pipeline into Fiber (v2).
//
// Middleware(limiter, key, opts...) returns a native fiber.Handler, with no
// conversion to net/http, that answers exactly as ratekit.Middleware does: the
// same headers, denials and error policies. Options have ratekit's names;
// those that read the request take the *fiber.Ctx. A KeyFunc may return
// strings that alias Fiber's reused buffers: the middleware copies them. ByIP
// resolves the client as ratekit.ByIP does; ByFrameworkIP opts in to c.IP.
//
// With InFlight limits, WithSettle or WithCountIf, handlers find the request's
// Reservation with ratekit.ReservationFrom(c.UserContext()), and an error the
// chain returns goes to the app's ErrorHandler inside the middleware. The
// middleware is safe for concurrent use. See
// docs/architecture.md#framework-adapters in the repository.
package ratekitfiber
