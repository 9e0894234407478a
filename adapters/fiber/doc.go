// Package ratekitfiber puts ratekit's rate-limiting pipeline into Fiber (v2).
//
// Middleware(limiter, key, opts...) returns a native fiber.Handler: it reads
// the request and writes the response through *fiber.Ctx, with no conversion
// to net/http, and answers exactly as ratekit.Middleware does on net/http: the
// same rate-limit headers on every decided request, the same 429 with
// Retry-After, Cache-Control: no-store and JSON body on a denial, and the same
// error policies when no decision can be made (WithErrorPolicy for store
// failures, WithKeyErrorPolicy for key and cost errors). A
// denied request is answered and the chain stops; an allowed one goes on with
// c.Next.
//
// Keys are functions of the *fiber.Ctx (KeyFunc). ByIP resolves the client
// address exactly as ratekit.ByIP does, from the socket peer and, only when
// the peer is a trusted proxy, from every line of the forwarding header. It
// does not use c.IP, whose answer depends on the app's ProxyHeader and
// trusted-proxy settings; ByFrameworkIP opts in to c.IP for apps whose proxy
// settings are right. ByHeader keys by a request header, and Join combines
// keys as ratekit.Join does. The middleware
// copies the key before it reaches the store, so a KeyFunc may return
// strings that alias Fiber's reused buffers (c.Get, c.Params).
//
// # In-flight limits and charges settled after the response
//
// With a ratekit.InFlight limit, WithSettle or WithCountIf, the middleware
// holds the request's ratekit.Reservation while the rest of the chain runs
// (c.Next); handlers find it with ratekit.ReservationFrom(c.UserContext()).
// Once the chain returns it finishes the reservation with the response
// status (a panic counts as 500 and goes on to the recover middleware). An
// error the chain returns goes to the app's ErrorHandler there, so that the
// status is the one the client gets, as Fiber's logger middleware does, and
// the middleware returns nil. fasthttp gives a request no context that ends
// when its client goes away: the InFlight slot is released when the handler
// returns, or sooner when c.UserContext() ends (a context with a deadline
// that an earlier middleware set).
//
// Options have ratekit's names (WithHeaders, WithErrorPolicy, WithTimeout,
// ...); WithSkip (like the Next field of Fiber's own middleware configs),
// WithCost/WithCostFunc and WithErrorHandler take the *fiber.Ctx. The Gin and
// Echo adapters offer the same names.
//
// The store call is bounded by c.UserContext() and the core timeout. The
// middleware is safe for concurrent use, like the Limiter it wraps.
package ratekitfiber
