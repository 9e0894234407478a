// Package paritytest holds the parity tests of the framework adapters: one
// scripted sequence of requests through net/http (ratekit.Middleware), Gin,
// Echo and Fiber must give identical status codes, headers, bodies and
// Prometheus metrics; a second holds handlers under an InFlight limit,
// WithCountIf and WithSettle and requires the same responses and counts. The
// gRPC interceptors answer the same sequences of calls with the same
// decisions, and 4 gRPC servers on one real Redis admit exactly the quota.
// It is its own module so that the adapters' modules never depend on each
// other's frameworks, nor on a metrics client or a Redis client. See
// docs/testing.md in the repository.
package paritytest
