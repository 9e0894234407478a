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
//
// Two stores ship with the kit: store/redisstore decides inside Redis in one
// Lua script per request, on Redis's clock, so every instance of a service
// shares one limit (standalone Redis and Redis Cluster); store/memstore gives
// the same answers inside one process.
//
// Limits are validated when the [Limiter] is built: a bad limit is an error
// from [New], never a failure at request time.
package ratekit
