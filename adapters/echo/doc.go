// Package ratekitecho puts ratekit's rate-limiting pipeline into Echo (v4):
// Middleware answers exactly as ratekit.Middleware does on net/http (the
// same headers, denials and error policies). ByIP keeps ratekit's trust
// model and never calls c.RealIP, which ByFrameworkIP opts in to.
//
// The middleware writes a denial or a fail-closed error itself, bypassing
// Echo's HTTPErrorHandler. With WithReturnError it returns an *echo.HTTPError
// instead: Code is the status, Message the rendered JSON body (a
// json.Marshaler), Internal wraps the *response.Error and any
// underlying error; the rate-limit headers stay on the response.
//
// With InFlight limits, WithSettle or WithCountIf, an error the chain returns
// goes to the HTTPErrorHandler inside the middleware, so a custom one should
// return early when c.Response().Committed. The middleware is safe for
// concurrent use. See docs/architecture.md#framework-adapters in the
// repository.
package ratekitecho
