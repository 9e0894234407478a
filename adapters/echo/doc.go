// Package ratekitecho puts ratekit's rate-limiting pipeline into Echo (v4).
//
// Middleware(limiter, key, opts...) returns an echo.MiddlewareFunc that
// answers exactly as ratekit.Middleware does on net/http: the same rate-limit
// headers on every decided request, the same 429 with Retry-After,
// Cache-Control: no-store and JSON body on a denial, and the same error
// policies when no decision can be made (WithErrorPolicy for store failures,
// WithKeyErrorPolicy for key and cost errors). Options have ratekit's names;
// those that read the request take the echo.Context. The Gin and Fiber
// adapters offer the same names.
//
// # Denials and Echo's error handling
//
// By default the middleware writes a denial (429) or a fail-closed error (503
// for a store failure, 400 for a key error) to the response itself: the next
// handler does not run and Echo's HTTPErrorHandler is not involved. This is
// how the response stays byte-for-byte that of the core whatever
// HTTPErrorHandler an application installs, and how a custom ratekit.Renderer
// (problem+json) keeps its content type.
//
// With WithReturnError the middleware instead returns an *echo.HTTPError,
// for applications whose HTTPErrorHandler owns every error response (logging,
// metrics, a house error format). The response keeps the rate-limit headers,
// Retry-After and Cache-Control; the body and its content type are the error
// handler's. The HTTPError's Code is the status. Its Message is the rendered
// body as a json.Marshaler that returns it unchanged (and a fmt.Stringer for
// logs), so Echo's DefaultHTTPErrorHandler sends the core's JSON body, plus
// the newline its JSON encoder adds, as application/json. Its Internal wraps
// the *ratekit.ErrorResponse and, on a 503 or 400, the underlying error, so a
// custom handler finds them with errors.As and errors.Is. The renderer must
// produce JSON in this mode; to keep RenderProblem's content type, use the
// default mode.
//
// # In-flight limits and charges settled after the response
//
// With a ratekit.InFlight limit, WithSettle or WithCountIf, the middleware
// holds the request's ratekit.Reservation while next runs; handlers find it
// with ratekit.ReservationFrom(c.Request().Context()). Once next returns it
// finishes the reservation with the response status, c.Response().Status (a
// panic counts as 500 and goes on to middleware.Recover), and it releases the
// InFlight slot then, when the handler returns. For the status of an error
// that next returns to be the one the client gets, the middleware hands the error to c.Error (the
// HTTPErrorHandler) unless the response is committed, and returns it too, as
// Echo's RequestLogger does with HandleError: Echo then calls the
// HTTPErrorHandler again with the committed response, which
// DefaultHTTPErrorHandler ignores; a custom HTTPErrorHandler should return
// early when c.Response().Committed, as Echo's does.
//
// # Keys
//
// Keys are Echo-native (KeyFunc takes the echo.Context). ByIP keeps
// ratekit's explicit trust model; ByHeader and Join mirror ratekit's, and
// FromHTTP adapts any ratekit.KeyFunc. The middleware never calls c.RealIP
// on its own: without an IPExtractor, Echo's RealIP returns the leftmost
// X-Forwarded-For value, which any client can write. ByFrameworkIP opts in to
// c.RealIP for applications that set echo.IPExtractor (e.g.
// echo.ExtractIPFromXFFHeader with trust options).
//
// The middleware is safe for concurrent use, like the Limiter it wraps.
package ratekitecho
