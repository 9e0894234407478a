// Package ratekitgin puts ratekit's rate-limiting pipeline into Gin.
//
// Middleware and GinMiddleware return a gin.HandlerFunc built on
// ratekit.Guard, so a Gin route answers exactly as ratekit.Middleware does on
// net/http: the same rate-limit headers on every decided request, the same 429
// with Retry-After, Cache-Control: no-store and JSON body on a denial, and the
// same error policies when no decision can be made (ratekit.WithErrorPolicy
// for store failures, ratekit.WithKeyErrorPolicy for key and cost errors). On
// a denial or a fail-closed error the middleware writes the response and calls
// c.Abort, so later handlers do not run.
//
// Keys. Middleware takes a ratekit.KeyFunc and applies it to c.Request, so
// ratekit.ByIP keeps its explicit trust model: only the socket peer unless
// trusted proxies are configured. The middleware never calls c.ClientIP on
// its own, because a default Gin engine trusts every proxy and would let any
// client choose its key through X-Forwarded-For. ByClientIP opts in to
// c.ClientIP for engines whose SetTrustedProxies is configured. GinMiddleware
// takes a GinKeyFunc, for keys that need the *gin.Context (a user set by an
// authentication middleware with c.Set, a route parameter).
//
// Options. WithSkip and WithCost/WithCostFunc take the *gin.Context; WithCore
// passes core options (headers, renderer, error code, error policies, error
// handler, timeout, clock) to the Guard. The core options that take an
// *http.Request (ratekit.WithSkip, WithCost, WithCostFunc,
// WithDeniedHandler) are not applied by a Guard: use this package's.
//
// The middleware is safe for concurrent use, like the Limiter it wraps.
package ratekitgin
