// Package ratekit is a rate-limiting kit for HTTP services.
//
// A [Limiter] applies one or more [Limit] values to a subject (a client IP, an
// account, an API key) through a [Store]. The store decides atomically: every
// limit of one call is checked, and either all of them are charged or none is.
// [Middleware] wraps a net/http handler in the pipeline
//
//	key function → limits → store → decision → headers and response
//
// so that a denied request gets 429 Too Many Requests with Retry-After, the
// rate-limit headers and a JSON body, and an allowed one reaches the handler.
// Most programs need only New, a limit constructor such as FixedWindow or
// GCRA, Middleware and a key function such as ByIP.
//
// Stores: store/memstore decides in process; the Redis store
// (github.com/ratekit/ratekit/store/redisstore, a module of its own) decides
// inside Redis in one Lua script per request, on Redis's clock, so every
// instance of a service shares one limit, on standalone Redis or Redis
// Cluster. Both give the same answers.
//
// Beside this package: lockout protects login and verification endpoints,
// levels applies global, per-tenant and per-endpoint limits with a reputation
// gate (reputation), and the Gin, Echo and Fiber adapters (one module each)
// answer exactly as Middleware does.
package ratekit
