// Package ratekitfiber puts ratekit's rate-limiting pipeline into Fiber (v2):
// Middleware is a native fiber.Handler, with no conversion to net/http, that
// answers exactly as ratekit.Middleware does (the same headers, denials and
// error policies). ByIP resolves the client as ratekit.ByIP does;
// ByFrameworkIP opts in to c.IP.
//
// With InFlight limits, WithSettle or WithCountIf, an error the chain returns
// goes to the app's ErrorHandler inside the middleware. The middleware is
// safe for concurrent use. See docs/architecture.md#framework-adapters in the
// repository.
package ratekitfiber
