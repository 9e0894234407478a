// Package ratekitgin puts ratekit's rate-limiting pipeline into Gin:
// Middleware answers exactly as ratekit.Middleware does (the same headers,
// denials and error policies) and aborts the chain on a denial or a
// fail-closed error. ByIP keeps ratekit's trust model; ByFrameworkIP opts in
// to c.ClientIP. The middleware is safe for concurrent use. See
// docs/architecture.md#framework-adapters in the repository.
package ratekitgin
