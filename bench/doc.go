// Package bench holds ratekit's comparative benchmarks: in-process Go
// benchmarks (go test -bench .) and, in cmd/compare, a driver that measures
// Redis-backed limiters on a private redis-server. It is a module of its own
// so that the limiters it compares against stay out of ratekit's
// dependencies.
package bench
